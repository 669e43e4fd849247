// Backward of the elementwise math (Erf, Sqrt, Reciprocal, Pow), LayerNorm, and the ops that select
// or repeat elements (Slice, Pad, Expand, Gather), each from forward ops.
#include <cstring>
#include <numbers>
#include <string>
#include <variant>

#include "core/autodiff/graph_math.hpp"
#include "core/autodiff/rules.hpp"
#include "core/runtime/op_math.hpp"
#include "porta/error.hpp"

namespace porta::autodiff::detail {
namespace {

[[noreturn]] void unsupported(const Node& node, const std::string& what) {
  throw Error(ErrorCode::Unsupported, "autodiff::gradients: " + std::string(to_string(node.op)) + " '" + node.name +
                                          "': " + what + " (docs/training.md)");
}

Tensor scalar(Graph& g, float value, Tensor like) { return filled(g, {1}, value, g.dtype(like)); }

}  // namespace

// d erf(x) = 2 / sqrt(pi) exp(-x^2), the exponential as a power of e.
Grads erf_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  const Tensor x = node.inputs[0];
  const Tensor gauss = g.pow(scalar(g, std::numbers::e_v<float>, x), scaled(g, g.mul(x, x), -1.0f));
  return {g.mul(dy, scaled(g, gauss, 2.0f * std::numbers::inv_sqrtpi_v<float>))};
}

Grads sqrt_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  return {scaled(g, g.div(dy, node.output), 0.5f)};  // 1 / (2 sqrt(x))
}

Grads reciprocal_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  const Tensor y = node.output;
  return {scaled(g, g.mul(dy, g.mul(y, y)), -1.0f)};  // -1 / x^2
}

// d(a^b)/da = b a^(b - 1); d/db = a^b ln(a) needs a log op porta does not have.
Grads pow_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  if (needs[1]) unsupported(node, "the gradient with respect to the exponent needs a log op porta lacks");
  const Tensor a = node.inputs[0], b = node.inputs[1];
  const Tensor da = g.mul(g.mul(dy, b), g.pow(a, g.sub(b, scalar(g, 1.0f, b))));
  return {sum_to(g, da, g.shape(a)), {}};
}

// y = x-hat scale + bias over the trailing axes from p.axis; with g = dy scale,
// dx = (g - mean(g) - x-hat mean(g x-hat)) / sqrt(var + eps).
Grads layer_norm_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  const auto& p = std::get<NormParams>(node.params);
  const Tensor x = node.inputs[0], scale = node.inputs[1];
  const Shape sx = g.shape(x), ss = g.shape(scale);
  std::vector<std::int64_t> axes;
  for (auto a = p.axis; a < static_cast<std::int64_t>(sx.size()); ++a) axes.push_back(a);
  const auto mean = [&](Tensor t) { return g.reduce(t, {.op = Reduction::Mean, .axes = axes, .keepdims = true}); };
  const Tensor centred = g.sub(x, mean(x));
  const Tensor var = mean(g.mul(centred, centred));
  const Tensor inv_std = g.reciprocal(g.sqrt(g.add(var, scalar(g, p.epsilon, x))));
  const Tensor x_hat = g.mul(centred, inv_std);
  Grads dx(node.inputs.size());
  if (needs[0]) {
    const Tensor gx = g.mul(dy, scale);
    dx[0] = g.mul(inv_std, g.sub(g.sub(gx, mean(gx)), g.mul(x_hat, mean(g.mul(gx, x_hat)))));
  }
  if (needs[1]) dx[1] = sum_to(g, g.mul(dy, x_hat), ss);
  if (node.inputs.size() > 2 && needs[2]) dx[2] = sum_to(g, dy, g.shape(node.inputs[2]));
  return dx;
}

// dy goes back to the elements the slice took, zeros elsewhere: a reversed axis is reversed again,
// then a pad puts dy in place. Steps other than 1 and -1 are not written yet.
Grads slice_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  const Shape sx = g.shape(node.inputs[0]);
  const auto dims = porta::detail::slice_dims(sx, std::get<SliceParams>(node.params));
  const std::size_t rank = sx.size();
  SliceParams reverse;
  PadParams place{.pads = std::vector<std::int64_t>(2 * rank, 0)};
  for (std::size_t d = 0; d < rank; ++d) {
    const auto& s = dims[d];
    if (s.step != 1 && s.step != -1) unsupported(node, "a step of " + std::to_string(s.step) + " is not written yet");
    const std::int64_t first = s.step == 1 ? s.start : s.start - s.length + 1;
    place.pads[d] = first;
    place.pads[rank + d] = sx[d] - first - s.length;
    if (s.step == -1 && s.length > 1) {
      reverse.starts.push_back(s.length - 1);
      reverse.ends.push_back(-s.length - 1);
      reverse.axes.push_back(static_cast<std::int64_t>(d));
      reverse.steps.push_back(-1);
    }
  }
  const Tensor ordered = reverse.axes.empty() ? dy : g.slice(dy, reverse);
  return {g.pad(ordered, place)};
}

// A constant pad's gradient is dy cropped back (its negative pads, which crop, become zero pads).
Grads pad_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  const auto& p = std::get<PadParams>(node.params);
  if (p.mode != PadMode::Constant)
    unsupported(node, std::string(to_string(p.mode)) + " padding's gradient is not written yet");
  PadParams back{.pads = p.pads};
  for (auto& v : back.pads) v = -v;
  return {g.pad(dy, back)};
}

Grads expand_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  return {sum_to(g, dy, g.shape(node.inputs[0]))};
}

// An embedding lookup's gradient: the rows of dy added into the table rows their indices name, as
// one-hot [T, V] (T indices, V rows; index i and i - V alike, gather counting negative ones from the
// end)ᵀ times dy [T, R]. No op scatters with addition, so this costs V T R multiply-adds where a
// scatter would take T R: for BERT's 30522-word table at 1024 tokens, 24 GFLOP a step.
Grads gather_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  Grads dx(2);
  if (!needs[0]) return dx;
  const Tensor data = node.inputs[0], indices = node.inputs[1];
  if (std::get<GatherParams>(node.params).axis != 0)
    throw Error(ErrorCode::Unsupported, "autodiff::gradients: gather '" + node.name +
                                            "' along an axis other than 0 has no backward rule yet");
  const Shape table = g.shape(data);
  const std::int64_t rows = table[0], count = g.desc(indices).numel();
  const std::int64_t width = g.desc(data).numel() / rows;
  const DType index_type = g.dtype(indices);
  const auto row_numbers = [&](std::int64_t first) {  // [1, V]: first, first + 1, ..., in the indices' dtype
    std::vector<std::byte> bytes(static_cast<std::size_t>(rows) * size_of(index_type));
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t v64 = first + r;
      const auto v32 = static_cast<std::int32_t>(v64);
      std::memcpy(bytes.data() + r * size_of(index_type), index_type == DType::i64 ? static_cast<const void*>(&v64) : &v32,
                  size_of(index_type));
    }
    return g.constant_bytes("autodiff_rows_" + std::to_string(g.tensors().size()), {1, rows}, index_type, bytes);
  };
  const Tensor column = g.reshape(indices, {count, 1});
  const Tensor hot =
      g.cast(g.logical_or(g.equal(column, row_numbers(0)), g.equal(column, row_numbers(-rows))), g.dtype(data));
  const Tensor sums = g.matmul(hot, g.reshape(dy, {count, width}), {.trans_a = true});
  dx[0] = g.reshape(sums, table);
  return dx;
}

}  // namespace porta::autodiff::detail
