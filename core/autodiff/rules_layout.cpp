// Backward of the ops that only move or convert values, and of the sums: reduce and global average
// pooling.
#include <string>
#include <utility>

#include "core/autodiff/graph_math.hpp"
#include "core/autodiff/rules.hpp"
#include "porta/error.hpp"

namespace porta::autodiff::detail {

Grads reshape_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  return {g.reshape(dy, g.shape(node.inputs[0]))};
}

Grads transpose_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  return {g.transpose(dy, inverse(std::get<TransposeParams>(node.params).perm))};
}

// Between float dtypes only: gradients.cpp stops gradients at integer and bool tensors.
Grads cast_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  return {g.cast(dy, g.dtype(node.inputs[0]))};
}

// Each input's gradient is its slice of dy along the concat axis.
Grads concat_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  const std::int64_t axis = std::get<ConcatParams>(node.params).axis;
  Grads dx(node.inputs.size());
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    const std::int64_t width = g.shape(node.inputs[i])[static_cast<std::size_t>(axis)];
    if (needs[i]) dx[i] = g.slice(dy, {.starts = {offset}, .ends = {offset + width}, .axes = {axis}, .steps = {}});
    offset += width;
  }
  return dx;
}

// Every input element shares its channel's dy equally.
Grads global_avg_pool_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  const Shape sx = g.shape(node.inputs[0]);
  const bool nhwc = std::get<GlobalPoolParams>(node.params).layout == Layout::NHWC;
  const std::int64_t h = sx[nhwc ? 1 : 2], w = sx[nhwc ? 2 : 3];
  const Shape spread = nhwc ? Shape{1, h, w, 1} : Shape{1, 1, h, w};
  return {g.mul(dy, filled(g, spread, 1.0f / static_cast<float>(h * w), g.dtype(dy)))};
}

// Sum and mean spread dy back over the reduced axes (mean divides by their extent).
Grads reduce_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  const auto& p = std::get<ReduceParams>(node.params);
  if (p.op != Reduction::Sum && p.op != Reduction::Mean)
    throw Error(ErrorCode::Unsupported, "autodiff::gradients: reduce '" + node.name + "': the backward of " +
                                            std::string(to_string(p.op)) + " is not written yet");
  const Shape sx = g.shape(node.inputs[0]);
  Shape kept = sx;
  std::int64_t count = 1;
  for (const std::int64_t axis : p.axes) count *= std::exchange(kept[static_cast<std::size_t>(axis)], 1);
  const Tensor spread = g.expand(g.reshape(dy, kept), sx);
  return {p.op == Reduction::Mean ? scaled(g, spread, 1.0f / static_cast<float>(count)) : spread};
}

}  // namespace porta::autodiff::detail
