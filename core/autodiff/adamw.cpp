// AdamW as elementwise ops per parameter, in the order PyTorch's single-tensor AdamW applies them.
#include "core/autodiff/graph_math.hpp"
#include "porta/autodiff.hpp"
#include "porta/error.hpp"

namespace porta::autodiff {
namespace {

void check_like(const Graph& g, Tensor param, Tensor t, const char* what) {
  if (!t || g.desc(t) != g.desc(param))
    throw Error(ErrorCode::ShapeMismatch, std::string("adamw_update: the ") + what + " of parameter " +
                                              g.info(param).name + " must have its shape " +
                                              to_string(g.shape(param)) + " and dtype");
}

// 1 - base^step, shape [1].
Tensor bias_correction(Graph& g, float base, Tensor step) {
  const DType dtype = g.dtype(step);
  return g.sub(detail::filled(g, {1}, 1.0f, dtype), g.pow(detail::filled(g, {1}, base, dtype), step));
}

}  // namespace

AdamWUpdate adamw_update(Graph& g, Tensor param, Tensor grad, Tensor m, Tensor v, Tensor step, const AdamWOptions& o) {
  check_like(g, param, grad, "gradient");
  check_like(g, param, m, "first moment");
  check_like(g, param, v, "second moment");
  if (!step || g.shape(step) != Shape{1})
    throw Error(ErrorCode::ShapeMismatch, "adamw_update: the step count must have shape [1]");
  const DType dtype = g.dtype(param);
  const auto in_dtype = [&](Tensor t) { return g.dtype(t) == dtype ? t : g.cast(t, dtype); };
  const Tensor decayed = detail::scaled(g, param, 1.0f - o.learning_rate * o.weight_decay);
  AdamWUpdate out;
  out.m = g.add(detail::scaled(g, m, o.beta1), detail::scaled(g, grad, 1.0f - o.beta1));
  out.v = g.add(detail::scaled(g, v, o.beta2), detail::scaled(g, g.mul(grad, grad), 1.0f - o.beta2));
  const Tensor step_size = in_dtype(
      g.div(detail::filled(g, {1}, o.learning_rate, g.dtype(step)), bias_correction(g, o.beta1, step)));
  const Tensor root_correction = in_dtype(g.sqrt(bias_correction(g, o.beta2, step)));
  const Tensor denominator =
      g.add(g.div(g.sqrt(out.v), root_correction), detail::filled(g, {1}, o.epsilon, dtype));
  out.param = g.sub(decayed, g.div(g.mul(out.m, step_size), denominator));
  return out;
}

}  // namespace porta::autodiff
