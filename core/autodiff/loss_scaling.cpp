// Dynamic loss scaling, all in the graph: the scale and its count of good steps are variables that
// each run updates on the device, so every backend runs it and a checkpoint resumes it.
#include <cmath>

#include "core/autodiff/graph_math.hpp"
#include "porta/autodiff.hpp"
#include "porta/error.hpp"

namespace porta::autodiff {
namespace {

// t in `dtype`, cast only where it differs.
Tensor as(Graph& g, Tensor t, DType dtype) { return g.dtype(t) == dtype ? t : g.cast(t, dtype); }

// [1] f32: 0 when every element of every gradient is finite, NaN otherwise (0 * inf and 0 * NaN are NaN).
Tensor nonfinite_sum(Graph& g, std::span<const Tensor> grads) {
  Tensor total = detail::filled(g, {1}, 0.0f, DType::f32);
  for (const Tensor grad : grads)
    total = g.add(total, as(g, detail::sum_to(g, detail::scaled(g, grad, 0.0f), {1}), DType::f32));
  return total;
}

void check_options(const LossScaleOptions& o) {
  if (!(o.initial_scale > 0.0f) || !std::isfinite(o.initial_scale) || o.growth_interval < 0)
    throw Error(ErrorCode::InvalidArgument, "loss scaling: the initial scale " + std::to_string(o.initial_scale) +
                                                " must be positive and finite, the growth interval " +
                                                std::to_string(o.growth_interval) + " not negative");
}

}  // namespace

Tensor loss_scale_variable(Graph& g, const LossScaleOptions& o) {
  check_options(o);
  return g.variable("loss_scale", {1}, std::vector<float>{o.initial_scale});
}

ScaledGradients unscale_gradients(Graph& g, std::span<const Tensor> scaled, Tensor scale, const LossScaleOptions& o) {
  check_options(o);
  if (g.info(scale).role != Role::Variable || g.dtype(scale) != DType::f32 || g.desc(scale).numel() != 1)
    throw Error(ErrorCode::InvalidArgument, "unscale_gradients: the scale '" + g.info(scale).name +
                                                "' must be a [1] f32 variable (loss_scale_variable's)");
  ScaledGradients out{.grads = {scaled.begin(), scaled.end()}, .finite = {}, .scale = scale};
  const Tensor inverse = g.reciprocal(out.scale);
  for (Tensor& grad : out.grads) grad = g.mul(grad, as(g, inverse, g.dtype(grad)));
  const Tensor zero = detail::filled(g, {1}, 0.0f, DType::f32);
  out.finite = g.equal(nonfinite_sum(g, out.grads), zero);
  if (o.growth_interval == 0) return out;
  // good' = finite ? good + 1 : 0; at growth_interval the scale doubles and good' restarts at 0;
  // an overflow halves the scale.
  const Tensor good = g.variable("loss_scale.good_steps", {1});
  const Tensor counted = g.where(out.finite, g.add(good, detail::filled(g, {1}, 1.0f, DType::f32)), zero);
  const Tensor grow =
      g.compare(counted, detail::filled(g, {1}, static_cast<float>(o.growth_interval), DType::f32),
                Comparison::GreaterOrEqual);
  g.assign(good, g.where(grow, zero, counted));
  g.assign(out.scale, g.where(out.finite, g.where(grow, detail::scaled(g, out.scale, 2.0f), out.scale),
                              detail::scaled(g, out.scale, 0.5f)));
  return out;
}

ScaledGradients scaled_gradients(Graph& g, Tensor loss, std::span<const Tensor> wrt, const LossScaleOptions& o) {
  const Tensor scale = loss_scale_variable(g, o);
  return unscale_gradients(g, gradients(g, g.mul(loss, as(g, scale, g.dtype(loss))), wrt), scale, o);
}

}  // namespace porta::autodiff
