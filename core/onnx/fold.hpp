#pragma once
// Load-time evaluation of the shape arithmetic exporters emit (Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape and the like): an op whose inputs are all known at load time becomes a known
// value itself, so that the graph porta builds is static.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/onnx/attrs.hpp"
#include "core/onnx/literal.hpp"

namespace porta::onnx {

// The largest value folding makes (elements), so that a small model cannot ask for a huge one:
// shape arithmetic needs a few, an attention mask sequence^2.
constexpr std::int64_t max_folded_elements = std::int64_t{1} << 22;
// The element count of `dims`: InvalidArgument for a negative extent, Unsupported past the limit.
std::int64_t folded_count(const Shape& dims);

// Whether fold() evaluates `op_type` (default domain).
bool foldable(std::string_view op_type);
// Whether fold() evaluates `op_type` on these values (all known): Transpose only integer ones, the
// shape arithmetic it appears in; a float one (weights, mostly) stays a graph node.
bool folds(std::string_view op_type, std::span<const Literal* const> inputs);
// The output of `n`; `inputs` holds the values of n.inputs, nullptr for an omitted one.
Literal fold(const NodeProto& n, std::span<const Literal* const> inputs, std::int64_t opset);

// An integer literal, as Shape and Size make.
Literal int_literal(Shape dims, std::vector<std::int64_t> values);
// Axes of Squeeze, Unsqueeze and the reductions: the attribute before opset `since`, input `input`
// (known at load time) from it on; empty when neither is given.
std::vector<std::int64_t> axes(const Attrs& a, const Literal* input, std::int64_t opset, std::int64_t since);
Shape squeezed(const Shape& dims, const std::vector<std::int64_t>& axes);
Shape unsqueezed(const Shape& dims, const std::vector<std::int64_t>& axes);

}  // namespace porta::onnx
