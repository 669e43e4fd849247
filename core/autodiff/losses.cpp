// Losses and training-mode layers built from ordinary ops, so that autodiff::gradients
// differentiates them with the rules it already has.
#include <vector>

#include "core/autodiff/graph_math.hpp"
#include "porta/autodiff.hpp"
#include "porta/error.hpp"

namespace porta::autodiff {

Tensor mean_squared_error(Graph& g, Tensor prediction, Tensor target, std::string name) {
  if (g.desc(prediction) != g.desc(target))
    throw Error(ErrorCode::ShapeMismatch, "mean_squared_error: prediction " + to_string(g.shape(prediction)) +
                                              " and target " + to_string(g.shape(target)) +
                                              " must have one shape and dtype");
  const Tensor diff = g.sub(prediction, target);
  const Tensor total = detail::sum_to(g, g.mul(diff, diff), {1});
  const float n = static_cast<float>(g.desc(prediction).numel());
  return g.mul(total, detail::filled(g, {1}, 1.0f / n, g.dtype(prediction)), std::move(name));
}

Tensor softmax_cross_entropy(Graph& g, Tensor logits, Tensor labels, std::string name) {
  const Tensor per_row = g.softmax_cross_entropy(logits, labels);
  const float rows = static_cast<float>(g.desc(per_row).numel());
  return g.mul(detail::sum_to(g, per_row, {1}), detail::filled(g, {1}, 1.0f / rows, g.dtype(logits)), std::move(name));
}

BatchStatistics batchnorm_training(Graph& g, Tensor x, Tensor scale, Tensor bias, float epsilon) {
  const Shape sx = g.shape(x);
  if (sx.size() < 2)
    throw Error(ErrorCode::ShapeMismatch, "batchnorm_training: input " + to_string(sx) + " needs a channel dimension");
  const Shape per_channel = detail::keep_axis(sx, 1), channel{sx[1]};
  const float inv_count = static_cast<float>(sx[1]) / static_cast<float>(g.desc(x).numel());
  const auto channel_mean = [&](Tensor t) { return detail::scaled(g, detail::sum_to(g, t, per_channel), inv_count); };
  const Tensor mean = channel_mean(x);
  const Tensor centred = g.sub(x, mean);
  const Tensor var = channel_mean(g.mul(centred, centred));
  const Tensor mean_c = g.reshape(mean, channel), var_c = g.reshape(var, channel);
  return {g.batchnorm(x, scale, bias, mean_c, var_c, {epsilon}), mean_c, var_c};
}

}  // namespace porta::autodiff
