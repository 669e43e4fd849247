// Backward of Conv2d (data, filters, bias, residual, through a fused activation), MaxPool2d (its
// own backward op) and AvgPool2d (a transposed depthwise convolution of dy over each window's share).
#include <variant>

#include "core/autodiff/graph_math.hpp"
#include "core/autodiff/rules.hpp"
#include "core/runtime/op_math.hpp"
#include "porta/autodiff.hpp"

namespace porta::autodiff::detail {

Grads conv2d_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  const auto p = std::get<Conv2dParams>(node.params);
  const porta::detail::ConvSlots slots = porta::detail::conv_slots(node);
  const Tensor x = node.inputs[0], w = node.inputs[1];
  const Tensor bias = slots.bias >= 0 ? node.inputs[static_cast<std::size_t>(slots.bias)] : Tensor{};
  const Tensor residual = slots.residual >= 0 ? node.inputs[static_cast<std::size_t>(slots.residual)] : Tensor{};
  const Shape sx = g.shape(x), sw = g.shape(w);  // copies: adding nodes moves the graph's tensors
  Conv2dParams linear = p;
  linear.activation = Activation::None;
  Tensor z;  // the pre-activation, recomputed where the activation's derivative needs it
  if (activation_needs_input(p.activation)) z = g.conv2d(x, w, linear, bias, {}, residual);
  const Tensor dz = activation_grad(g, p.activation, z, node.output, dy, node);
  linear.residual = false;
  Grads dx(node.inputs.size());
  if (needs[0]) dx[0] = conv2d_backward_data(g, dz, w, linear, sx);
  if (needs[1]) dx[1] = conv2d_backward_filter(g, x, dz, linear, sw);
  if (bias && needs[static_cast<std::size_t>(slots.bias)]) {
    const std::size_t channel_axis = p.layout == Layout::NHWC ? 3 : 1;
    dx[static_cast<std::size_t>(slots.bias)] = g.reshape(sum_to(g, dz, keep_axis(g.shape(dz), channel_axis)), {sw[0]});
  }
  if (residual && needs[static_cast<std::size_t>(slots.residual)]) dx[static_cast<std::size_t>(slots.residual)] = dz;
  return dx;
}

Grads max_pool_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  return {g.max_pool2d_backward(node.inputs[0], dy, std::get<Pool2dParams>(node.params))};
}

// Each window spreads dy / count evenly over its taps: dy scaled by a constant map of 1 / count per
// window, then a transposed depthwise convolution with filters of ones.
Grads avg_pool_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  const auto& p = std::get<Pool2dParams>(node.params);
  const Shape sx = g.shape(node.inputs[0]);
  const porta::detail::PoolDims d = porta::detail::pool_dims(sx, p);
  std::vector<float> share(static_cast<std::size_t>(d.p * d.q));
  for (std::int64_t oh = 0; oh < d.p; ++oh)
    for (std::int64_t ow = 0; ow < d.q; ++ow) {
      std::int64_t inside = 0, padded = 0;  // as the forward counts them (core/ref/pool.cpp)
      for (std::int64_t i = 0; i < p.kernel[0]; ++i)
        for (std::int64_t j = 0; j < p.kernel[1]; ++j) {
          const std::int64_t h = oh * p.stride[0] - p.pad[0] + i * p.dilation[0];
          const std::int64_t w = ow * p.stride[1] - p.pad[1] + j * p.dilation[1];
          padded += h >= -p.pad[0] && h < d.h + p.pad[2] && w >= -p.pad[1] && w < d.w + p.pad[3];
          inside += h >= 0 && h < d.h && w >= 0 && w < d.w;
        }
      const std::int64_t count = p.count_include_pad ? padded : inside;
      share[static_cast<std::size_t>(oh * d.q + ow)] = count == 0 ? 0.0f : 1.0f / static_cast<float>(count);
    }
  const bool nhwc = p.layout == Layout::NHWC;
  const DType dt = g.dtype(dy);
  const Tensor scaled_dy = g.mul(dy, constant(g, nhwc ? Shape{1, d.p, d.q, 1} : Shape{1, 1, d.p, d.q}, share, dt));
  const Tensor ones = filled(g, {d.c, 1, p.kernel[0], p.kernel[1]}, 1.0f, dt);
  const Conv2dParams depthwise{
      .stride = p.stride, .pad = p.pad, .dilation = p.dilation, .groups = d.c, .layout = p.layout};
  return {transposed_conv(g, scaled_dy, ones, depthwise, d.h, d.w)};
}

}  // namespace porta::autodiff::detail
