// Conv2d, with the algorithm chosen per layer: depthwise convolutions have too little reuse for a
// GEMM and get a direct vectorised kernel; every other one is an implicit GEMM, whose B panels
// are packed straight from the input (or are the input, for 1x1 stride-1 layers).
#include <algorithm>
#include <optional>
#include <variant>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "backends/cpu/kernels/depthwise_row.hpp"
#include "backends/cpu/kernels/gemm_f32.hpp"
#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/ops/tensor_io.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

struct ConvOperands {
  const ConvDims& d;
  const Conv2dParams& p;
  const float* x;
  const float* w;
  const float* bias;      // nullptr without a bias
  const float* residual;  // nullptr without a residual; else shaped like y
  const F32Output& y;

  float bias_of(std::int64_t k) const { return bias ? bias[k] : 0.0f; }
  // The epilogue of output elements [offset, offset + count): + bias + residual, then activation.
  void finish(float* y_run, std::int64_t offset, std::int64_t count, float bias) const {
    const float* r = residual ? residual + offset : nullptr;
    for (std::int64_t j = 0; j < count; ++j) y_run[j] = activate(p.activation, y_run[j] + bias + (r ? r[j] : 0.0f));
    y.commit(offset, count);
  }
};

// Output columns [first, last) whose input column ow * stride + offset lies in [0, width).
std::pair<std::int64_t, std::int64_t> inside_columns(std::int64_t offset, std::int64_t stride, std::int64_t width,
                                                     std::int64_t columns) {
  const std::int64_t first = std::min(columns, offset >= 0 ? 0 : (-offset + stride - 1) / stride);
  const std::int64_t reach = width - 1 - offset;
  return {first, std::clamp(reach < 0 ? 0 : reach / stride + 1, first, columns)};
}

// The column matrix of one image and group, columns[(c * R + r) * S + s][oh * Q + ow], packed
// straight into the GEMM's B panels: implicit GEMM, with no im2col buffer.
class Im2colPanels final : public GemmPanelSource {
 public:
  Im2colPanels(const ConvOperands& op, const float* x_group) : op_(op), x_group_(x_group) {}

  void pack(std::int64_t lane0, std::int64_t lanes, std::int64_t p0, std::int64_t depth, std::int64_t width,
            float* dst) const override {
    for (std::int64_t l0 = 0; l0 < lanes; l0 += width, dst += width * depth) {
      const std::int64_t used = std::min(width, lanes - l0);
      for (std::int64_t p = 0; p < depth; ++p) {
        float* panel_row = dst + p * width;
        pack_row(p0 + p, lane0 + l0, used, panel_row);
        std::fill(panel_row + used, panel_row + width, 0.0f);
      }
    }
  }

 private:
  // Row `k` of the column matrix, columns [col, col + count), into out: runs along output rows.
  void pack_row(std::int64_t k, std::int64_t col, std::int64_t count, float* out) const {
    const ConvDims& d = op_.d;
    const std::int64_t c = k / (d.r * d.s), r = k / d.s % d.r, s = k % d.s;
    const auto [stride_h, stride_w] = op_.p.stride;
    const std::int64_t offset = s * op_.p.dilation[1] - op_.p.pad[1];
    for (const std::int64_t end = col + count; col < end;) {
      const std::int64_t oh = col / d.q, ow0 = col % d.q, run = std::min(d.q - ow0, end - col);
      const std::int64_t h = oh * stride_h - op_.p.pad[0] + r * op_.p.dilation[0];
      if (h < 0 || h >= d.h) {
        std::fill_n(out, run, 0.0f);
      } else {
        const float* x_row = x_group_ + (c * d.h + h) * d.w;
        auto [first, last] = inside_columns(offset, stride_w, d.w, d.q);
        first = std::clamp(first, ow0, ow0 + run), last = std::clamp(last, first, ow0 + run);
        std::fill(out, out + (first - ow0), 0.0f);
        if (stride_w == 1) {
          std::copy(x_row + first + offset, x_row + last + offset, out + (first - ow0));
        } else {
          for (std::int64_t ow = first; ow < last; ++ow) out[ow - ow0] = x_row[ow * stride_w + offset];
        }
        std::fill(out + (last - ow0), out + run, 0.0f);
      }
      out += run, col += run;
    }
  }

  const ConvOperands& op_;
  const float* x_group_;
};

// Y[Kg, P*Q] = W[Kg, Cg*R*S] x columns[Cg*R*S, P*Q] per image and group. The GEMM parallelises
// each product; images and groups run side by side as well.
void conv_as_gemm(const ConvOperands& op) {
  const ConvDims& d = op.d;
  const Conv2dParams& p = op.p;
  // 1x1, stride 1, unpadded: the input plane itself is the column matrix.
  const bool pointwise = d.r == 1 && d.s == 1 && p.stride[0] == 1 && p.stride[1] == 1 &&
                         std::ranges::all_of(p.pad, [](std::int64_t v) { return v == 0; });
  const std::int64_t depth = d.c_per_group * d.r * d.s;
  const std::int64_t plane = d.p * d.q;
  tbb::parallel_for(std::int64_t{0}, d.n * d.groups, [&](std::int64_t task) {
    const std::int64_t image = task / d.groups, group = task % d.groups;
    const float* x_group = op.x + (image * d.c + group * d.c_per_group) * d.h * d.w;
    const Im2colPanels columns(op, x_group);
    const GemmOperand b = pointwise ? GemmOperand::f32(x_group, plane) : GemmOperand::packed_by(columns);
    const std::int64_t first_filter = group * d.k_per_group;
    const std::int64_t y_offset = (image * d.k + first_filter) * plane;
    float* y_block = op.y.data() + y_offset;
    gemm_f32(d.k_per_group, plane, depth, GemmOperand::f32(op.w + first_filter * depth, depth), b, y_block, plane,
             [&](const GemmTile& t) {
               for (std::int64_t i = t.row; i < t.row + t.rows; ++i)
                 op.finish(y_block + i * plane + t.col, y_offset + i * plane + t.col, t.cols, op.bias_of(first_filter + i));
             });
  });
}

// groups == C == K: output plane (n, k) reads only input plane (n, k) and filter k. An output row
// gets one vectorised row update per filter row inside the image.
void depthwise(const ConvOperands& op) {
  const ConvDims& d = op.d;
  const auto [stride_h, stride_w] = op.p.stride;
  const auto [dil_h, dil_w] = op.p.dilation;
  const std::int64_t pad_top = op.p.pad[0], pad_left = op.p.pad[1];
  const DepthwiseRowFn add_row = depthwise_row();
  const auto output_rows = tbb::blocked_range<std::int64_t>(0, d.n * d.k * d.p);
  tbb::parallel_for(output_rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t row = range.begin(); row != range.end(); ++row) {
      const std::int64_t plane = row / d.p, oh = row % d.p, k = plane % d.k;
      const float* x_plane = op.x + plane * d.h * d.w;
      const float* filter = op.w + k * d.r * d.s;
      float* y_row = op.y.data() + row * d.q;
      std::fill_n(y_row, d.q, 0.0f);
      for (std::int64_t r = 0; r < d.r; ++r) {
        const std::int64_t h = oh * stride_h - pad_top + r * dil_h;
        if (h < 0 || h >= d.h) continue;
        add_row(filter + r * d.s, d.s, x_plane + h * d.w, stride_w, dil_w, -pad_left, d.w, y_row, d.q);
      }
      op.finish(y_row, row * d.q, d.q, op.bias_of(k));
    }
  });
}

}  // namespace

void cpu_conv2d(const HostOpArgs& args) {
  const auto& p = std::get<Conv2dParams>(args.node.params);
  const ConvDims d = conv_dims(args.inputs[0].shape(), args.inputs[1].shape(), p);
  if (args.output.numel() == 0) return;
  const F32Input x(args.inputs[0]);
  const F32Input w(args.inputs[1]);
  const ConvSlots slots = conv_slots(args.node);
  std::optional<F32Input> bias, residual;
  if (slots.bias >= 0) bias.emplace(args.inputs[slots.bias]);
  if (slots.residual >= 0) residual.emplace(args.inputs[slots.residual]);
  const F32Output y(args.output);
  const ConvOperands op{.d = d, .p = p, .x = x.data(), .w = w.data(),
                        .bias = bias ? bias->data() : nullptr, .residual = residual ? residual->data() : nullptr,
                        .y = y};
  if (d.groups == d.c && d.groups == d.k) {
    depthwise(op);
  } else {
    conv_as_gemm(op);
  }
}

}  // namespace porta::detail
