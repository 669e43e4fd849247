// Binary ops with numpy broadcasting, activations, elementwise math and Cast, streamed through f32 chunks.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <variant>

#include "backends/cpu/kernels/vector_kernels.hpp"
#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/ops/tensor_io.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

// Reads one operand of a broadcast binary op in the output's element order. Almost every real
// broadcast (scalar, bias row, per-channel [C, 1, 1]) repeats one block of values: output element
// i reads value (i / inner) % period. Other patterns pay for a full index computation once per
// run along the last dimension.
class BroadcastReader {
 public:
  BroadcastReader(const HostTensor& operand, const Shape& result)
      : operand_(operand), index_(operand.shape(), result) {
    if (operand.numel() == result_numel(result)) return;  // same layout: read straight through
    values_.emplace(operand);
    periodic_ = find_period(operand.shape(), result);
    last_ = result.back();
    last_contiguous_ = operand.shape().back() == last_;
  }

  // The operand's values for output elements [begin, begin + count).
  const float* read(std::int64_t begin, std::int64_t count, float* buffer) const {
    if (!values_) return read_f32(operand_, begin, count, buffer);
    const float* values = values_->data();
    if (!periodic_) {
      // Along the result's last dimension the operand is contiguous or one repeated value (a
      // channels-last [N, 1, 1, C] gate, say): one index computation per run of it.
      for (std::int64_t i = 0; i < count;) {
        const std::int64_t at = begin + i, run = std::min(last_ - at % last_, count - i);
        const float* from = values + index_(at);
        if (last_contiguous_) std::copy_n(from, run, buffer + i);
        else std::fill_n(buffer + i, run, *from);
        i += run;
      }
      return buffer;
    }
    std::int64_t within = begin % inner_, index = begin / inner_ % period_;
    for (std::int64_t i = 0; i < count; ++i) {
      buffer[i] = values[index];
      if (++within == inner_) {
        within = 0;
        if (++index == period_) index = 0;
      }
    }
    return buffer;
  }

 private:
  static std::int64_t result_numel(const Shape& shape) {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    return n;
  }

  // True when the operand's non-broadcast dimensions are consecutive in the result, which
  // makes its values repeat as one block; sets inner_ and period_.
  bool find_period(const Shape& operand, const Shape& result) {
    const std::size_t lead = result.size() - operand.size();
    std::size_t first = result.size(), last = 0;  // range of the dimensions the operand keeps
    for (std::size_t i = lead; i < result.size(); ++i) {
      if (operand[i - lead] == 1) continue;
      first = std::min(first, i);
      last = i + 1;
    }
    if (first == result.size()) return true;  // a single value: period 1, inner 1
    for (std::size_t i = first; i < last; ++i) {
      if (operand[i - lead] != result[i]) return false;  // a broadcast dimension inside
    }
    period_ = result_numel(Shape(result.begin() + first, result.begin() + last));
    inner_ = result_numel(Shape(result.begin() + last, result.end()));
    return true;
  }

  const HostTensor& operand_;
  BroadcastIndex index_;
  std::optional<F32Input> values_;  // whole operand in f32, unless it is read straight through
  bool periodic_ = false;
  std::int64_t period_ = 1, inner_ = 1;
  std::int64_t last_ = 1;         // the result's last dimension
  bool last_contiguous_ = false;  // the operand keeps it (else it repeats one value along it)
};

// y = op(x) elementwise, in f32 chunks.
template <class Op> void map(const HostTensor& x, const HostTensor& y, Op op) {
  parallel_chunks(y.numel(), chunk_elements, [&](std::int64_t begin, std::int64_t count) {
    ChunkBuffer x_buffer, y_buffer;
    const float* xv = read_f32(x, begin, count, x_buffer.data());
    float* yv = write_f32(y, begin, y_buffer.data());
    for (std::int64_t i = 0; i < count; ++i) yv[i] = op(xv[i]);
    store_f32(y, begin, count, yv);
  });
}

template <class Op> void binary(const HostOpArgs& args, Op op) {
  const HostTensor& y = args.output;
  // One operand with a single value (x * scale, x + bias) and the other laid out as the output:
  // a loop over one stream, with no broadcast buffer to fill. Same arithmetic, same results.
  const HostTensor &x0 = args.inputs[0], &x1 = args.inputs[1];
  if (x1.numel() == 1 && x0.numel() == y.numel())
    return map(x0, y, [op, s = x1.load(0)](float v) { return op(v, s); });
  if (x0.numel() == 1 && x1.numel() == y.numel())
    return map(x1, y, [op, s = x0.load(0)](float v) { return op(s, v); });
  // A channels-last gate or scale: one operand laid out as the output, the other one row along the
  // output's last dimension per outer position ([N, 1, 1, C] against [N, H, W, C], the squeeze-
  // excite multiply), or one value per row ([R, 1] against [R, C], a spelt-out layer norm's mean
  // and spread). Row by row from the operand itself, with no broadcast buffer to fill.
  const std::int64_t row = y.shape().back();
  for (const bool gate_second : {true, false}) {
    const HostTensor &full = gate_second ? x0 : x1, &gate = gate_second ? x1 : x0;
    // One value per row pays an index computation a row: not for NCHW's short rows ([N, C, 1, 1]
    // against 7x7 maps), which the periodic reader below takes.
    const bool one_per_row = gate.shape().back() == 1 && row >= 16;
    if (full.numel() != y.numel() || gate.numel() == y.numel() || (gate.shape().back() != row && !one_per_row) ||
        row > chunk_elements)
      continue;
    const F32Input gate_values(gate);
    const BroadcastIndex index(gate.shape(), y.shape());
    return parallel_chunks(y.numel(), chunk_elements / row * row, [&](std::int64_t begin, std::int64_t count) {
      ChunkBuffer full_buffer, y_buffer;
      const float* fv = read_f32(full, begin, count, full_buffer.data());
      float* yv = write_f32(y, begin, y_buffer.data());
      for (std::int64_t r = 0; r < count; r += row) {
        const float* gv = gate_values.data() + index(begin + r);
        if (one_per_row) {
          const float g = *gv;
          if (gate_second) {
            for (std::int64_t i = 0; i < row; ++i) yv[r + i] = op(fv[r + i], g);
          } else {
            for (std::int64_t i = 0; i < row; ++i) yv[r + i] = op(g, fv[r + i]);
          }
        } else if (gate_second) {
          for (std::int64_t i = 0; i < row; ++i) yv[r + i] = op(fv[r + i], gv[i]);
        } else {
          for (std::int64_t i = 0; i < row; ++i) yv[r + i] = op(gv[i], fv[r + i]);
        }
      }
      store_f32(y, begin, count, yv);
    });
  }
  const BroadcastReader a(args.inputs[0], y.shape());
  const BroadcastReader b(args.inputs[1], y.shape());
  parallel_chunks(y.numel(), chunk_elements, [&](std::int64_t begin, std::int64_t count) {
    ChunkBuffer a_buffer, b_buffer, y_buffer;
    const float* av = a.read(begin, count, a_buffer.data());
    const float* bv = b.read(begin, count, b_buffer.data());
    float* yv = write_f32(y, begin, y_buffer.data());
    for (std::int64_t i = 0; i < count; ++i) yv[i] = op(av[i], bv[i]);
    store_f32(y, begin, count, yv);
  });
}

template <class Op> void unary(const HostOpArgs& args, Op op) { map(args.inputs[0], args.output, op); }

// y = f(x) by a vector kernel of the widest instruction set, in place on each f32 chunk.
void unary_run(const HostOpArgs& args, ActivationRunFn run) {
  const HostTensor &x = args.inputs[0], &y = args.output;
  parallel_chunks(y.numel(), chunk_elements, [&](std::int64_t begin, std::int64_t count) {
    ChunkBuffer x_buffer, y_buffer;
    const float* xv = read_f32(x, begin, count, x_buffer.data());
    float* yv = write_f32(y, begin, y_buffer.data());
    if (yv != xv) std::copy_n(xv, count, yv);
    run(yv, count);
    store_f32(y, begin, count, yv);
  });
}

}  // namespace

void cpu_add(const HostOpArgs& args) { binary(args, std::plus<float>{}); }
void cpu_sub(const HostOpArgs& args) { binary(args, std::minus<float>{}); }
void cpu_mul(const HostOpArgs& args) { binary(args, std::multiplies<float>{}); }
void cpu_div(const HostOpArgs& args) { binary(args, std::divides<float>{}); }

void cpu_relu(const HostOpArgs& args) {
  unary(args, [](float x) { return activate(Activation::Relu, x); });
}

void cpu_clip(const HostOpArgs& args) {
  const auto& p = std::get<ClipParams>(args.node.params);
  unary(args, [lo = p.min, hi = p.max](float x) { return clip(x, lo, hi); });
}

void cpu_sigmoid(const HostOpArgs& args) { unary_run(args, vector_kernels().sigmoid); }
void cpu_silu(const HostOpArgs& args) { unary_run(args, vector_kernels().silu); }
void cpu_tanh(const HostOpArgs& args) { unary_run(args, vector_kernels().tanh); }

void cpu_gelu(const HostOpArgs& args) {
  const bool tanh_approximation = std::get<GeluParams>(args.node.params).tanh_approximation;
  unary_run(args, tanh_approximation ? vector_kernels().gelu_tanh : vector_kernels().gelu);
}

void cpu_erf(const HostOpArgs& args) { unary_run(args, vector_kernels().erf); }
void cpu_sqrt(const HostOpArgs& args) {
  unary(args, [](float x) { return std::sqrt(x); });
}
void cpu_reciprocal(const HostOpArgs& args) {
  unary(args, [](float x) { return 1.0f / x; });
}
void cpu_hard_sigmoid(const HostOpArgs& args) {
  const auto& p = std::get<HardSigmoidParams>(args.node.params);
  unary(args, [alpha = p.alpha, beta = p.beta](float x) { return hard_sigmoid(x, alpha, beta); });
}
void cpu_hard_swish(const HostOpArgs& args) { unary(args, hard_swish<float>); }
void cpu_pow(const HostOpArgs& args) {
  binary(args, [](float a, float b) { return std::pow(a, b); });
}

// The conversion is in the loads and stores: the output tensor has the target dtype. Between
// integer dtypes it goes through int64, exact where a float would round.
void cpu_cast(const HostOpArgs& args) {
  const HostTensor& x = args.inputs[0];
  const HostTensor& y = args.output;
  if (is_float(x.dtype()) || is_float(y.dtype())) {
    unary(args, [](float v) { return v; });
    return;
  }
  parallel_chunks(y.numel(), chunk_elements, [&](std::int64_t begin, std::int64_t count) {
    for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(begin + count); ++i)
      store_from_i64(y.data, i, y.dtype(), load_as_i64(x.data, i, x.dtype()));
  });
}

}  // namespace porta::detail
