#pragma once
// Unfused attention as exporters write it, folded into porta's attention op at import.
#include "porta/graph.hpp"

namespace porta::onnx::detail {

// Replaces each MatMul(q, kᵀ) -> Mul or Div by a one-element constant (optional) -> Add(mask)
// (optional) -> Softmax(last axis) -> MatMul(., v) chain over 4-D tensors, whose links have no other
// reader, by one attention node. kᵀ may be MatMul's trans_b or a Transpose, which is composed
// into k's. Returns the graph unchanged when there is no such chain.
Graph fuse_attention(Graph graph);

}  // namespace porta::onnx::detail
