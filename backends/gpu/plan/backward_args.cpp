// Kernel arguments of the backward ops and the fused loss (ops/backward.cu).
#include <variant>

#include "backends/gpu/plan/op_args.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail::gpu {

ActivationBackwardArgs activation_backward_args(const Graph& graph, const Node& node) {
  return {.dtype = graph.dtype(node.output), .count = graph.desc(node.output).numel(),
          .forward = activation_gradient(std::get<ActivationBackwardParams>(node.params))};
}

MaxPoolBackwardArgs max_pool_backward_args(const Graph& graph, const Node& node) {
  return {.window = pool_args(graph, node)};
}

DepthwiseGradientArgs depthwise_gradient_args(const Graph& graph, const Node& node) {
  const auto& p = std::get<Conv2dParams>(node.params);
  const ConvDims d = depthwise_gradient_dims(graph.shape(node.inputs[0]), graph.shape(node.inputs[1]), p);
  return {.dtype = graph.dtype(node.output), .n = d.n, .c = d.c, .h = d.h, .w = d.w, .p = d.p, .q = d.q, .r = d.r,
          .s = d.s, .stride = {p.stride[0], p.stride[1]}, .pad = {p.pad[0], p.pad[1]},
          .dilation = {p.dilation[0], p.dilation[1]}};
}

SoftmaxCrossEntropyArgs softmax_cross_entropy_args(const Graph& graph, const Node& node) {
  const Shape& z = graph.shape(node.inputs[0]);
  const std::int64_t classes = z.back();
  const DType labels = graph.dtype(node.inputs[1]);
  return {.dtype = graph.dtype(node.output), .rows = graph.desc(node.inputs[0]).numel() / classes, .classes = classes,
          .index_labels = !is_float(labels), .index64 = labels == DType::i64};
}

SoftmaxCrossEntropyBackwardArgs softmax_cross_entropy_backward_args(const Graph& graph, const Node& node) {
  const std::int64_t classes = graph.shape(node.inputs[0]).back();
  return {.dtype = graph.dtype(node.output), .rows = graph.desc(node.inputs[0]).numel() / classes, .classes = classes,
          .index64 = graph.dtype(node.inputs[1]) == DType::i64};
}

}  // namespace porta::detail::gpu
