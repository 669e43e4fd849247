// Constants and sums over axes for the backward rules (graph_math.hpp).
#include "core/autodiff/graph_math.hpp"

#include <algorithm>
#include <string>

namespace porta::autodiff::detail {

Tensor filled(Graph& g, Shape shape, float value, DType dtype) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  const std::vector<float> values(static_cast<std::size_t>(n), value);
  // Tensor count as the suffix: unique in this graph, and the same on every rebuild of it.
  return g.constant("autodiff_const_" + std::to_string(g.tensors().size()), std::move(shape), values, dtype);
}

Tensor scaled(Graph& g, Tensor x, float value) {
  if (value == 1.0f) return x;
  return g.mul(x, filled(g, {1}, value, g.dtype(x)));
}

Tensor sum_to(Graph& g, Tensor x, Shape target) {
  const Shape shape = g.shape(x);
  const std::size_t lead = shape.size() - target.size();  // axes broadcasting added in front
  std::vector<std::int64_t> reduced, kept;
  std::int64_t r = 1, k = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const bool sum = i < lead || (target[i - lead] == 1 && shape[i] != 1);
    (sum ? reduced : kept).push_back(static_cast<std::int64_t>(i));
    (sum ? r : k) *= shape[i];
  }
  if (r == 1) return shape == target ? x : g.reshape(x, target);
  std::vector<std::int64_t> perm = reduced;
  perm.insert(perm.end(), kept.begin(), kept.end());
  if (!std::is_sorted(perm.begin(), perm.end())) x = g.transpose(x, perm);
  const Tensor rows = g.reshape(x, {r, k});
  const Tensor sum = g.matmul(filled(g, {1, r}, 1.0f, g.dtype(x)), rows);  // [1, k]
  return g.reshape(sum, target);
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
