#pragma once
// ONNX Einsum for the equations exporters write, in porta's ops.
#include <span>
#include <string>
#include <string_view>

#include "porta/graph.hpp"

namespace porta::onnx::detail {

// One operand: a transpose, after a sum over the letters the output leaves out ("ij->ji", "bij->bj").
// Two: a batched matrix product ("bhid,bhjd->bhij", "ij,jk"): letters of both operands and the output
// are batch dimensions, of one operand and the output its rows or columns, of both operands only
// the summed one; a letter of one operand alone is summed first. The output may be implicit (the
// letters used once, in alphabetical order). Ellipses, a letter repeated within an operand (a
// diagonal) and more than two operands are Unsupported; a malformed equation is InvalidArgument.
Tensor einsum(Graph& g, std::string_view equation, std::span<const Tensor> operands, const std::string& name);

}  // namespace porta::onnx::detail
