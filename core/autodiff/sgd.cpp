// SGD with momentum and weight decay as a handful of elementwise ops per parameter.
#include "core/autodiff/graph_math.hpp"
#include "porta/autodiff.hpp"
#include "porta/error.hpp"

namespace porta::autodiff {

SgdUpdate sgd_update(Graph& g, Tensor param, Tensor grad, Tensor velocity, const SgdOptions& o) {
  if (g.desc(grad) != g.desc(param))
    throw Error(ErrorCode::ShapeMismatch, "sgd_update: gradient " + to_string(g.shape(grad)) + " of parameter " +
                                              g.info(param).name + " " + to_string(g.shape(param)) +
                                              " must have its shape and dtype");
  if (o.momentum != 0.0f && (!velocity || g.desc(velocity) != g.desc(param)))
    throw Error(ErrorCode::InvalidArgument, "sgd_update: momentum " + std::to_string(o.momentum) +
                                                " needs a velocity of the shape and dtype of " + g.info(param).name);
  Tensor step = o.weight_decay == 0.0f ? grad : g.add(grad, detail::scaled(g, param, o.weight_decay));
  SgdUpdate out;
  if (o.momentum != 0.0f) step = out.velocity = g.add(detail::scaled(g, velocity, o.momentum), step);
  out.param = g.sub(param, detail::scaled(g, step, o.learning_rate));
  return out;
}

}  // namespace porta::autodiff
