// Backward of the fused attention, y = P v with P = softmax(scale q kᵀ + mask), the causal keys
// hidden: the scores are recomputed as the unfused graph computes them (the forward keeps none), then
// dv = Pᵀ dy, dP = dy vᵀ, dS = P (dP - rowsum(dP P)) (softmax's rule), dq = scale dS k,
// dk = scale dSᵀ q, and the mask's gradient dS summed to its shape. The [b, h, sq, sk] scores are
// materialised here, as in the unfused graph.
#include <limits>
#include <variant>

#include "core/autodiff/graph_math.hpp"
#include "core/autodiff/rules.hpp"

namespace porta::autodiff::detail {

Grads attention_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  const auto p = std::get<AttentionParams>(node.params);
  const Tensor q = node.inputs[0], k = node.inputs[1], v = node.inputs[2];
  const Tensor mask = node.inputs.size() > 3 ? node.inputs[3] : Tensor{};
  const DType dt = g.dtype(q);
  const Shape sq = g.shape(q), sk = g.shape(k);  // copies: adding nodes moves the graph's tensors
  const std::int64_t queries = sq[sq.size() - 2], keys = sk[sk.size() - 2];
  // q scaled first, as the kernels scale inside the product: in f16 q kᵀ alone can overflow.
  const Tensor q_scaled = scaled(g, q, p.scale);
  Tensor scores = g.matmul(q_scaled, k, {.trans_b = true});
  if (mask) scores = g.add(scores, mask);
  if (p.causal) {  // query i sees keys 0 .. i: -inf where key > query, which softmax weighs 0
    const auto numbers = [&](std::int64_t n, Shape shape) {
      std::vector<float> values(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = static_cast<float>(i);
      return constant(g, std::move(shape), values, DType::f32);
    };
    const Tensor hidden = g.greater(numbers(keys, {1, keys}), numbers(queries, {queries, 1}));
    scores = g.where(hidden, filled(g, {1}, -std::numeric_limits<float>::infinity(), dt), scores);
  }
  const Tensor weights = g.softmax(scores, -1);
  Grads dx(node.inputs.size());
  if (needs[2]) dx[2] = g.matmul(weights, dy, {.trans_a = true});
  if (!(needs[0] || needs[1] || (mask && needs[3]))) return dx;
  const Tensor dp = g.matmul(dy, v, {.trans_b = true});
  const Shape rows = drop_axis(g.shape(weights), g.shape(weights).size() - 1);
  const Tensor ds = g.mul(weights, g.sub(dp, sum_to(g, g.mul(dp, weights), rows)));
  if (needs[0]) dx[0] = scaled(g, g.matmul(ds, k), p.scale);
  if (needs[1]) dx[1] = g.matmul(ds, q_scaled, {.trans_a = true});
  if (mask && needs[3]) dx[3] = sum_to(g, ds, g.shape(mask));
  return dx;
}

}  // namespace porta::autodiff::detail
