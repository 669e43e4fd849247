// Backward of MatMul and Gemm: Y = op(A) op(B) gives dop(A) = dY op(B)^T and dop(B) = op(A)^T dY,
// each a product again (with the transposes in the flags), summed over broadcast batch dims.
#include "core/autodiff/graph_math.hpp"
#include "core/autodiff/rules.hpp"

namespace porta::autodiff::detail {
namespace {

// A vector operand as the matrix it acts as: A [K] is [1, K], B [K] is [K, 1].
Tensor as_matrix(Graph& g, Tensor t, bool is_a) {
  const Shape& s = g.shape(t);
  if (s.size() != 1) return t;
  return g.reshape(t, is_a ? Shape{1, s[0]} : Shape{s[0], 1});
}

}  // namespace

Grads matmul_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  const auto p = std::get<MatMulParams>(node.params);
  const Tensor a = node.inputs[0], b = node.inputs[1];
  const Tensor a2 = as_matrix(g, a, true), b2 = as_matrix(g, b, false);
  const Shape sa = g.shape(a2), sb = g.shape(b2);  // copies: adding nodes moves the graph's tensors
  const std::int64_t m = p.trans_a ? sa.back() : sa[sa.size() - 2];
  const std::int64_t n = p.trans_b ? sb[sb.size() - 2] : sb.back();
  const std::size_t batch_rank = std::max(sa.size(), sb.size()) - 2;
  Shape full(g.shape(dy).begin(), g.shape(dy).begin() + static_cast<std::ptrdiff_t>(batch_rank));
  full.push_back(m);
  full.push_back(n);
  const Tensor dy2 = g.shape(dy) == full ? dy : g.reshape(dy, full);
  Grads dx(2);
  if (needs[0]) {
    const Tensor da = p.trans_a ? g.matmul(b2, dy2, {p.trans_b, true}) : g.matmul(dy2, b2, {false, !p.trans_b});
    dx[0] = sum_to(g, da, sa);
    if (g.shape(a).size() == 1) dx[0] = g.reshape(dx[0], g.shape(a));
  }
  if (needs[1]) {
    const Tensor db = p.trans_b ? g.matmul(dy2, a2, {true, p.trans_a}) : g.matmul(a2, dy2, {!p.trans_a, false});
    dx[1] = sum_to(g, db, sb);
    if (g.shape(b).size() == 1) dx[1] = g.reshape(dx[1], g.shape(b));
  }
  return dx;
}

Grads gemm_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  const auto p = std::get<GemmParams>(node.params);
  const Tensor a = node.inputs[0], b = node.inputs[1];
  const Tensor c = node.inputs.size() > 2 ? node.inputs[2] : Tensor{};
  Tensor z;  // the pre-activation, recomputed where the activation's derivative needs it
  if (activation_needs_input(p.activation)) {
    GemmParams linear = p;
    linear.activation = Activation::None;
    z = g.gemm(a, b, linear, c);
  }
  const Tensor dz = activation_grad(g, p.activation, z, node.output, dy, node);
  Grads dx(node.inputs.size());
  if (needs[0])
    dx[0] = p.trans_a ? g.gemm(b, dz, {p.trans_b, true, p.alpha, 1.0f, Activation::None})
                      : g.gemm(dz, b, {false, !p.trans_b, p.alpha, 1.0f, Activation::None});
  if (needs[1])
    dx[1] = p.trans_b ? g.gemm(dz, a, {true, p.trans_a, p.alpha, 1.0f, Activation::None})
                      : g.gemm(a, dz, {!p.trans_a, false, p.alpha, 1.0f, Activation::None});
  if (c && needs[2]) dx[2] = scaled(g, sum_to(g, dz, g.shape(c)), p.beta);
  return dx;
}

}  // namespace porta::autodiff::detail
