// The reverse sweep: visits the forward nodes from the loss back to the inputs, asks each node's
// rule for its inputs' gradients and sums the gradients of tensors that feed several nodes.
#include <string>

#include "core/autodiff/graph_math.hpp"
#include "core/autodiff/rules.hpp"
#include "porta/autodiff.hpp"
#include "porta/error.hpp"

namespace porta::autodiff {
namespace {

using detail::Grads;

// Which float tensors depend on some tensor of `wrt` through float tensors alone: nodes are stored
// in topological order, so one forward pass marks them all. Integer and bool tensors (indices,
// masks, comparisons, integer casts) are piecewise constant, so no gradient flows to or through
// them: they are never marked, no rule is asked for their gradient, and none reaches them.
std::vector<bool> depends_on(const Graph& g, std::span<const Tensor> wrt) {
  std::vector<bool> marked(g.tensors().size(), false);
  for (const Tensor t : wrt) marked[static_cast<std::size_t>(t.id)] = true;
  for (const Node& n : g.nodes()) {
    if (!is_float(g.dtype(n.output))) continue;
    for (const Tensor in : n.inputs)
      if (marked[static_cast<std::size_t>(in.id)]) marked[static_cast<std::size_t>(n.output.id)] = true;
  }
  return marked;
}

// The loss and every tensor of `wrt` must be float: an integer or bool tensor has no gradient.
void check_float(const Graph& g, Tensor t, const char* what) {
  if (is_float(g.dtype(t))) return;
  throw Error(ErrorCode::InvalidArgument, "autodiff::gradients: " + std::string(what) + " '" + g.info(t).name +
                                              "' is " + std::string(to_string(g.dtype(t))) +
                                              ": only f32, f16 and bf16 tensors have gradients");
}

void check_seed(const Graph& g, Tensor loss, Tensor seed) {
  if (g.desc(seed) != g.desc(loss))
    throw Error(ErrorCode::ShapeMismatch, "autodiff::gradients: seed " + g.info(seed).name + " " +
                                              to_string(g.shape(seed)) + " must have the shape and dtype of loss " +
                                              g.info(loss).name + " " + to_string(g.shape(loss)));
}

}  // namespace

std::vector<Tensor> gradients(Graph& g, Tensor loss, std::span<const Tensor> wrt, Tensor seed) {
  g.info(loss);  // throws NotFound for a foreign handle
  for (const Tensor t : wrt) g.info(t);
  check_float(g, loss, "loss");
  for (const Tensor t : wrt) check_float(g, t, "tensor");
  if (seed) check_seed(g, loss, seed);
  const std::vector<bool> marked = depends_on(g, wrt);
  std::vector<Tensor> grad(g.tensors().size());
  auto& loss_grad = grad[static_cast<std::size_t>(loss.id)];
  loss_grad = seed ? seed : detail::filled(g, g.shape(loss), 1.0f, g.dtype(loss));
  const std::int32_t last = g.info(loss).producer;
  for (std::int32_t i = last; i >= 0; --i) {
    const Node node = g.nodes()[static_cast<std::size_t>(i)];  // a copy: the rules append nodes
    const Tensor dy = grad[static_cast<std::size_t>(node.output.id)];
    std::vector<bool> needs(node.inputs.size());
    bool any = false;
    for (std::size_t k = 0; k < needs.size(); ++k)
      any |= needs[k] = marked[static_cast<std::size_t>(node.inputs[k].id)];
    if (!dy || !any) continue;
    const detail::Rule rule = detail::backward_rule(node.op);
    if (rule == nullptr)
      throw Error(ErrorCode::Unsupported, "autodiff::gradients: " + std::string(to_string(node.op)) + " '" + node.name +
                                              "' has no backward rule yet (docs/training.md lists those that do)");
    const Grads dx = rule(g, node, dy, needs);
    for (std::size_t k = 0; k < dx.size(); ++k) {
      if (!needs[k] || !dx[k]) continue;
      Tensor& acc = grad[static_cast<std::size_t>(node.inputs[k].id)];
      acc = acc ? g.add(acc, dx[k]) : dx[k];  // a tensor that feeds several nodes sums their gradients
    }
  }
  std::vector<Tensor> result;
  for (const Tensor t : wrt) {
    const Tensor dt = grad[static_cast<std::size_t>(t.id)];
    result.push_back(dt ? dt : detail::filled(g, g.shape(t), 0.0f, g.dtype(t)));
  }
  return result;
}

}  // namespace porta::autodiff
