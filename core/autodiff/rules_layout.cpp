// Backward of the ops that only move or convert values, and of global average pooling.
#include <numeric>
#include <string>

#include "core/autodiff/graph_math.hpp"
#include "core/autodiff/rules.hpp"

namespace porta::autodiff::detail {

Grads reshape_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  return {g.reshape(dy, g.shape(node.inputs[0]))};
}

Grads transpose_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  return {g.transpose(dy, inverse(std::get<TransposeParams>(node.params).perm))};
}

Grads cast_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  return {g.cast(dy, g.dtype(node.inputs[0]))};
}

// Each input's slice of dy, cut out by a product with a 0/1 selection matrix along the concat axis
// (moved last): exact, and made of ops every backend runs.
Grads concat_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  const auto axis = std::get<ConcatParams>(node.params).axis;
  const Shape sy = g.shape(dy);  // copies: adding nodes moves the graph's tensors
  const auto rank = static_cast<std::int64_t>(sy.size());
  std::vector<std::int64_t> perm(sy.size());
  std::iota(perm.begin(), perm.end(), 0);
  perm.erase(perm.begin() + axis);
  perm.push_back(axis);
  const bool moved = axis != rank - 1;
  const Tensor last = moved ? g.transpose(dy, perm) : dy;
  const std::int64_t total = sy[static_cast<std::size_t>(axis)];
  const Tensor rows = g.reshape(last, {g.desc(dy).numel() / total, total});
  Grads dx(node.inputs.size());
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    Shape part = g.shape(node.inputs[i]);
    const std::int64_t width = part[static_cast<std::size_t>(axis)];
    if (needs[i]) {
      std::vector<float> select(static_cast<std::size_t>(total * width), 0.0f);
      for (std::int64_t j = 0; j < width; ++j) select[static_cast<std::size_t>((offset + j) * width + j)] = 1.0f;
      const Tensor s = g.constant("autodiff_select_" + std::to_string(g.tensors().size()), {total, width}, select,
                                  g.dtype(dy));
      Shape moved_shape;
      for (const auto p : perm) moved_shape.push_back(part[static_cast<std::size_t>(p)]);
      const Tensor slice = g.reshape(g.matmul(rows, s), moved_shape);
      dx[i] = moved ? g.transpose(slice, inverse(perm)) : slice;
    }
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

}  // namespace porta::autodiff::detail
