#pragma once
// Small graph-building helpers the backward rules share: constants and sums over axes, each made
// of ordinary ops.
#include <span>
#include <vector>

#include "porta/graph.hpp"

namespace porta::autodiff::detail {

// A constant of `shape` filled with `value`, in `dtype`, under a fresh name.
Tensor filled(Graph& g, Shape shape, float value, DType dtype);
// A constant of `shape` holding `values`, in `dtype`, under a fresh name.
Tensor constant(Graph& g, Shape shape, std::span<const float> values, DType dtype);
// x * value, as a multiplication by a one-element constant.
Tensor scaled(Graph& g, Tensor x, float value);
// Sums x over the axes where `target` is 1 or missing (numpy broadcasting read backwards), so that
// the result has shape `target`: the gradient of an operand that was broadcast.
Tensor sum_to(Graph& g, Tensor x, Shape target);
// `shape` with every axis but `keep` set to 1 (a per-channel sum's shape, dims kept).
Shape keep_axis(const Shape& shape, std::size_t keep);
// `shape` with `axis` set to 1.
Shape drop_axis(const Shape& shape, std::size_t axis);
// The permutation that undoes `perm`.
std::vector<std::int64_t> inverse(const std::vector<std::int64_t>& perm);

}  // namespace porta::autodiff::detail
