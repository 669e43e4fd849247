// The optimisers that drive variables: their state made as variables, each step's results assigned.
#include <vector>

#include "core/autodiff/graph_math.hpp"
#include "porta/autodiff.hpp"
#include "porta/error.hpp"

namespace porta::autodiff {
namespace {

void check_pairs(const Graph& g, std::span<const Tensor> params, std::span<const Tensor> grads, const char* who) {
  if (params.size() != grads.size())
    throw Error(ErrorCode::InvalidArgument, std::string(who) + ": " + std::to_string(params.size()) +
                                                " parameters but " + std::to_string(grads.size()) + " gradients");
  for (const Tensor p : params)
    if (g.info(p).role != Role::Variable)
      throw Error(ErrorCode::InvalidArgument, std::string(who) + ": parameter '" + g.info(p).name +
                                                  "' is not a variable (make it with Graph::variable)");
}

// A zero variable named `<param><suffix>` shaped like `param`.
Tensor state_like(Graph& g, Tensor param, const char* suffix) {
  const TensorInfo& info = g.info(param);
  return g.variable(info.name + suffix, info.desc.shape, {}, info.desc.dtype);
}

}  // namespace

void apply_sgd(Graph& g, std::span<const Tensor> params, std::span<const Tensor> grads, const SgdOptions& o) {
  check_pairs(g, params, grads, "apply_sgd");
  for (std::size_t i = 0; i < params.size(); ++i) {
    const Tensor velocity = o.momentum == 0.0f ? Tensor{} : state_like(g, params[i], ".velocity");
    const SgdUpdate next = sgd_update(g, params[i], grads[i], velocity, o);
    g.assign(params[i], next.param);
    if (velocity) g.assign(velocity, next.velocity);
  }
}

void apply_adamw(Graph& g, std::span<const Tensor> params, std::span<const Tensor> grads, const AdamWOptions& o) {
  check_pairs(g, params, grads, "apply_adamw");
  const Tensor count = g.variable("adamw.step", {1});
  const Tensor step = g.add(count, detail::filled(g, {1}, 1.0f, DType::f32));
  g.assign(count, step);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const Tensor m = state_like(g, params[i], ".m"), v = state_like(g, params[i], ".v");
    const AdamWUpdate next = adamw_update(g, params[i], grads[i], m, v, step, o);
    g.assign(params[i], next.param);
    g.assign(m, next.m);
    g.assign(v, next.v);
  }
}

}  // namespace porta::autodiff
