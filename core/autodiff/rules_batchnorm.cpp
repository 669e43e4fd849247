// Backward of BatchNorm, y = scale (x - mean) / sqrt(var + eps) + bias per channel (dim 1), with
// respect to all five inputs. The batchnorm op itself computes the 1/sqrt terms: batchnorm(dy,
// scale, 0, 0, var) is dy scale / sqrt(var + eps), and batchnorm(x, 1, 0, mean, var) is x-hat.
// Training mode (batch statistics) differentiates through the ops that computed mean and var.
#include "core/autodiff/graph_math.hpp"
#include "core/autodiff/rules.hpp"

namespace porta::autodiff::detail {

Grads batchnorm_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  const auto p = std::get<BatchNormParams>(node.params);
  const Tensor x = node.inputs[0], scale = node.inputs[1], mean = node.inputs[3], var = node.inputs[4];
  const Shape channel = g.shape(scale);
  const Shape per_channel = keep_axis(g.shape(x), 1);
  const DType dt = g.dtype(x);
  const Tensor zeros = filled(g, channel, 0.0f, dt);
  const auto channel_sum = [&](Tensor t) { return g.reshape(sum_to(g, t, per_channel), channel); };
  Grads dx(5);
  Tensor dx_hat;  // dy scale / sqrt(var + eps), x's gradient
  if (needs[0] || needs[3]) dx_hat = g.batchnorm(dy, scale, zeros, zeros, var, p);
  if (needs[0]) dx[0] = dx_hat;
  if (needs[3]) dx[3] = scaled(g, channel_sum(dx_hat), -1.0f);
  if (needs[2]) dx[2] = channel_sum(dy);
  if (needs[1] || needs[4]) {
    const Tensor x_hat = g.batchnorm(x, filled(g, channel, 1.0f, dt), zeros, mean, var, p);
    const Tensor d_scale = channel_sum(g.mul(dy, x_hat));
    if (needs[1]) dx[1] = d_scale;
    // dy/dvar = -scale x-hat / (2 (var + eps))
    if (needs[4])
      dx[4] = scaled(g, g.div(g.mul(d_scale, scale), g.add(var, filled(g, {1}, p.epsilon, dt))), -0.5f);
  }
  return dx;
}

}  // namespace porta::autodiff::detail
