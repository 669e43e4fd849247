// Constants and sums over axes for the backward rules (graph_math.hpp).
#include "core/autodiff/graph_math.hpp"

#include <string>

namespace porta::autodiff::detail {

Tensor constant(Graph& g, Shape shape, std::span<const float> values, DType dtype) {
  // Tensor count as the suffix: unique in this graph, and the same on every rebuild of it.
  return g.constant("autodiff_const_" + std::to_string(g.tensors().size()), std::move(shape), values, dtype);
}

Tensor filled(Graph& g, Shape shape, float value, DType dtype) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  const std::vector<float> values(static_cast<std::size_t>(n), value);
  return constant(g, std::move(shape), values, dtype);
}

Tensor scaled(Graph& g, Tensor x, float value) {
  if (value == 1.0f) return x;
  return g.mul(x, filled(g, {1}, value, g.dtype(x)));
}

Tensor sum_to(Graph& g, Tensor x, Shape target) {
  const Shape shape = g.shape(x);
  const std::size_t lead = shape.size() - target.size();  // axes broadcasting added in front
  std::vector<std::int64_t> axes;
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (i < lead || (target[i - lead] == 1 && shape[i] != 1)) axes.push_back(static_cast<std::int64_t>(i));
  if (axes.empty()) return shape == target ? x : g.reshape(x, target);
  return g.reshape(g.reduce(x, {.op = Reduction::Sum, .axes = std::move(axes), .keepdims = true}), target);
}

Shape keep_axis(const Shape& shape, std::size_t keep) {
  Shape out(shape.size(), 1);
  out[keep] = shape[keep];
  return out;
}

Shape drop_axis(const Shape& shape, std::size_t axis) {
  Shape out = shape;
  out[axis] = 1;
  return out;
}

std::vector<std::int64_t> inverse(const std::vector<std::int64_t>& perm) {
  std::vector<std::int64_t> inv(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inv[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
  return inv;
}

}  // namespace porta::autodiff::detail
