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

void check_condition(const Graph& g, Tensor apply_if, const char* who) {
  if (apply_if && (g.dtype(apply_if) != DType::boolean || g.shape(apply_if) != Shape{1}))
    throw Error(ErrorCode::InvalidArgument, std::string(who) + ": apply_if must be a bool [1] tensor, not " +
                                                std::string(to_string(g.dtype(apply_if))) + " " +
                                                to_string(g.shape(apply_if)));
}

// Assigns `value` to `variable`, or, given a condition, the value where it holds and the old one elsewhere.
void assign_if(Graph& g, Tensor apply_if, Tensor variable, Tensor value) {
  g.assign(variable, apply_if ? g.where(apply_if, value, variable) : value);
}

}  // namespace

void apply_sgd(Graph& g, std::span<const Tensor> params, std::span<const Tensor> grads, const SgdOptions& o,
               Tensor apply_if) {
  check_pairs(g, params, grads, "apply_sgd");
  check_condition(g, apply_if, "apply_sgd");
  for (std::size_t i = 0; i < params.size(); ++i) {
    const Tensor velocity = o.momentum == 0.0f ? Tensor{} : state_like(g, params[i], ".velocity");
    const SgdUpdate next = sgd_update(g, params[i], grads[i], velocity, o);
    assign_if(g, apply_if, params[i], next.param);
    if (velocity) assign_if(g, apply_if, velocity, next.velocity);
  }
}

void apply_adamw(Graph& g, std::span<const Tensor> params, std::span<const Tensor> grads, const AdamWOptions& o,
                 Tensor apply_if) {
  check_pairs(g, params, grads, "apply_adamw");
  check_condition(g, apply_if, "apply_adamw");
  const Tensor count = g.variable("adamw.step", {1});
  const Tensor step = g.add(count, detail::filled(g, {1}, 1.0f, DType::f32));
  assign_if(g, apply_if, count, step);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const Tensor m = state_like(g, params[i], ".m"), v = state_like(g, params[i], ".v");
    const AdamWUpdate next = adamw_update(g, params[i], grads[i], m, v, step, o);
    assign_if(g, apply_if, params[i], next.param);
    assign_if(g, apply_if, m, next.m);
    assign_if(g, apply_if, v, next.v);
  }
}

}  // namespace porta::autodiff
