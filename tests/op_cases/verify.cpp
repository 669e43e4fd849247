#include "op_cases/verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace porta::cases {
namespace {

enum class Precision { Exact, Elementwise, Accumulating };

// Exact ops only move or select input values, so any correct kernel reproduces ref bit for bit.
// Elementwise ops round once into the output dtype; accumulating ops also sum in f32 where ref
// sums in f64.
Precision precision_of(OpKind op) {
  static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
  switch (op) {
    case OpKind::Relu:
    case OpKind::Clip:
    case OpKind::MaxPool2d:
    case OpKind::Reshape:
    case OpKind::Transpose:
    case OpKind::Concat:
    case OpKind::Cast:
    case OpKind::Slice:
    case OpKind::Pad:
    case OpKind::Expand:
    case OpKind::Gather:
    case OpKind::Compare:
    case OpKind::Logical:
    case OpKind::Where:
    case OpKind::Dropout: return Precision::Exact;  // one f32 product, rounded as ref rounds it
    case OpKind::MatMul:
    case OpKind::Gemm:
    case OpKind::Conv2d:
    case OpKind::AvgPool2d:
    case OpKind::GlobalAvgPool:
    case OpKind::Softmax:
    case OpKind::Reduce:
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
    case OpKind::MaxPool2dBackward:
    case OpKind::DepthwiseFilterGradient:
    case OpKind::SoftmaxCrossEntropy:
    case OpKind::SoftmaxCrossEntropyBackward:
    case OpKind::Attention: return Precision::Accumulating;
    default: return Precision::Elementwise;
  }
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Elements the caller's buffer must hold for an input: its strided extent, or its element count.
std::size_t buffer_elements(const TensorInfo& info) {
  if (info.input_strides.empty()) return static_cast<std::size_t>(info.desc.numel());
  std::int64_t extent = 1;
  for (std::size_t d = 0; d < info.desc.shape.size(); ++d) extent += info.input_strides[d] * (info.desc.shape[d] - 1);
  return static_cast<std::size_t>(extent);
}

std::string format(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", v);
  return buffer;
}

}  // namespace

Comparison compare(std::span<const float> got, std::span<const float> want) {
  if (got.size() != want.size())
    throw Error(ErrorCode::InvalidArgument, "compare: " + std::to_string(got.size()) + " values against " +
                                                std::to_string(want.size()));
  Comparison c;
  double& err2 = c.error_energy;
  double& want2 = c.want_energy;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double w = want[i], g = got[i];
    if (!std::isfinite(w)) continue;  // the caller judges a non-finite reference
    c.want_max_abs = std::max(c.want_max_abs, std::abs(w));
    if (!std::isfinite(g)) {
      if (c.non_finite++ == 0) c.worst = static_cast<std::int64_t>(i);
      continue;
    }
    const double e = std::abs(g - w);
    err2 += e * e;
    want2 += w * w;
    if (e > c.max_abs) {
      c.max_abs = e;
      if (c.non_finite == 0) c.worst = static_cast<std::int64_t>(i);
    }
  }
  c.nmse = want2 > 0.0 ? err2 / want2 : (err2 > 0.0 ? INFINITY : 0.0);
  return c;
}

namespace {

// tf32 keeps 10 mantissa bits of each f32 operand of a product, as f16 does.
DType judged_dtype(OpKind op, DType dtype, bool tf32) {
  const bool product = op == OpKind::MatMul || op == OpKind::Gemm || op == OpKind::Conv2d;
  return tf32 && product && dtype == DType::f32 ? DType::f16 : dtype;
}

}  // namespace

double nmse_threshold(OpKind op, DType dtype, bool tf32) {
  dtype = judged_dtype(op, dtype, tf32);
  // f32 rounds at 2^-24, f16 at 2^-11, bf16 at 2^-8: a one-ulp disagreement on every element gives
  // an NMSE of about 2^-46, 2^-20 and 2^-14. Correct kernels disagree on few elements.
  switch (precision_of(op)) {
    case Precision::Exact: return 0.0;
    case Precision::Elementwise: return dtype == DType::f32 ? 1e-10 : dtype == DType::f16 ? 1e-6 : 1e-4;
    case Precision::Accumulating: return dtype == DType::f32 ? 1e-9 : dtype == DType::f16 ? 1e-5 : 5e-4;
  }
  return 0.0;
}

double max_abs_tolerance(OpKind op, DType dtype, bool tf32) {
  dtype = judged_dtype(op, dtype, tf32);
  // A few output ulps relative to the largest value (2^-10 in f16, 2^-7 in bf16).
  switch (precision_of(op)) {
    case Precision::Exact: return 0.0;
    case Precision::Elementwise: return dtype == DType::f32 ? 1e-5 : dtype == DType::f16 ? 4e-3 : 3e-2;
    case Precision::Accumulating: return dtype == DType::f32 ? 1e-4 : dtype == DType::f16 ? 4e-3 : 3e-2;
  }
  return 0.0;
}

std::vector<float> random_values(std::size_t count, std::uint64_t seed, float lo, float hi) {
  std::vector<float> values(count);
  std::uint64_t state = seed;
  for (float& v : values) {
    do {  // exact zeros are redrawn: no input is all zeros, and no denominator is zero
      const double u = static_cast<double>(splitmix64(state) >> 40) * 0x1p-24;  // [0, 1), 24 bits
      v = static_cast<float>(lo + (static_cast<double>(hi) - lo) * u);
      if (v >= hi) v = std::nextafter(hi, lo);
    } while (v == 0.0f);
  }
  return values;
}

void set_random_inputs(Executable& exe, const Graph& graph, std::uint64_t seed) {
  const std::vector<Tensor> inputs = graph.inputs();
  for (std::size_t i = 0; i < inputs.size(); ++i)
    exe.set_input(graph.info(inputs[i]).name, random_input_values(graph, i, seed));
}

namespace {

// The rows an integer input may pick where gathers read it as indices: the smallest extent they
// index; 0 where none does.
std::int64_t gathered_rows(const Graph& graph, Tensor input) {
  std::int64_t rows = 0;
  for (const Node& n : graph.nodes()) {
    if (n.op != OpKind::Gather || n.inputs[1].id != input.id) continue;
    const auto axis = static_cast<std::size_t>(std::get<GatherParams>(n.params).axis);
    const std::int64_t extent = graph.shape(n.inputs[0])[axis];
    rows = rows == 0 ? extent : std::min(rows, extent);
  }
  return rows;
}

}  // namespace

std::vector<float> random_input_values(const Graph& graph, std::size_t index, std::uint64_t seed) {
  const Tensor input = graph.inputs().at(index);
  const std::size_t count = buffer_elements(graph.info(input));
  const std::int64_t rows = is_float(graph.dtype(input)) ? 0 : gathered_rows(graph, input);
  if (rows == 0) return random_values(count, seed + index);
  std::vector<float> values = random_values(count, seed + index, 0.0f, static_cast<float>(rows));
  for (float& v : values) v = std::floor(v);
  return values;
}

Limits limits_of(OpKind op, DType dtype, bool tf32) {
  return {nmse_threshold(op, dtype, tf32), max_abs_tolerance(op, dtype, tf32)};
}

void check_output(Verification& v, const std::string& name, const Shape& shape, DType dtype, OpKind op, bool tf32,
                  std::span<const float> got, std::span<const float> want) {
  check_output(v, name, shape, dtype, limits_of(op, dtype, tf32), got, want);
}

void check_output(Verification& v, const std::string& name, const Shape& shape, DType dtype, const Limits& limits,
                  std::span<const float> got, std::span<const float> want) {
  const auto fail = [&](const std::string& why) {
    v.passed = false;
    v.detail += (v.detail.empty() ? "" : "; ") + why;
  };
  const std::string where = "output '" + name + "' (" + std::string(to_string(dtype)) + ")";
  if (got.size() != want.size()) {
    fail(where + ": " + std::to_string(got.size()) + " elements, ref has " + std::to_string(want.size()));
    return;
  }
  std::int64_t ref_non_finite = 0;
  for (const float w : want) ref_non_finite += std::isfinite(w) ? 0 : 1;
  if (ref_non_finite > 0) fail(where + ": ref produced " + std::to_string(ref_non_finite) + " non-finite values");
  const Comparison c = compare(got, want);
  const double least_energy = limits.scale * limits.scale * static_cast<double>(want.size());
  const double nmse = c.want_energy < least_energy ? c.error_energy / least_energy : c.nmse;
  v.nmse = std::max(v.nmse, nmse);
  v.max_abs = std::max(v.max_abs, c.max_abs);
  const double nmse_limit = limits.nmse;
  const double abs_limit = limits.max_abs * std::max(c.want_max_abs, limits.scale);
  std::string why;
  if (c.non_finite > 0) why = std::to_string(c.non_finite) + " non-finite values (unwritten or overflowed)";
  else if (nmse > nmse_limit) why = "nmse " + format(nmse) + " > " + format(nmse_limit);
  else if (c.max_abs > abs_limit) why = "max abs error " + format(c.max_abs) + " > " + format(abs_limit);
  if (why.empty()) return;
  const auto i = static_cast<std::size_t>(c.worst);
  fail(where + ": " + why + " (nmse " + format(nmse) + ", max abs " + format(c.max_abs) + "; element " +
       std::to_string(i) + " of " + to_string(shape) + ": got " + format(got[i]) + ", want " + format(want[i]) + ")");
}

Verification verify_against(const Graph& graph, const Device& device, const Device& oracle, OpKind op,
                            std::uint64_t seed, const CompileOptions& options) {
  CompileOptions device_options = options;
  device_options.poison_memory = true;
  CompileOptions oracle_options;
  oracle_options.poison_memory = true;
  Executable want_exe = oracle.compile(graph, oracle_options);
  Executable got_exe = device.compile(graph, device_options);
  set_random_inputs(want_exe, graph, seed);
  set_random_inputs(got_exe, graph, seed);
  want_exe.run();
  got_exe.run();

  Verification v;
  v.passed = true;
  for (const auto& [name, t] : graph.outputs())
    check_output(v, name, graph.shape(t), graph.dtype(t), op, options.allow_tf32, got_exe.output(name),
                 want_exe.output(name));
  return v;
}

Verification verify_against_ref(const Graph& graph, const Device& device, OpKind op, std::uint64_t seed,
                                const CompileOptions& options) {
  return verify_against(graph, device, Device::open("ref"), op, seed, options);
}

}  // namespace porta::cases
