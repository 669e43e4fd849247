// Launchers of kernels/backward.cl.
#include <variant>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void opencl_activation_backward(LaunchBuilder& b, const Node& node) {
  const ActivationGradient f = activation_gradient(std::get<ActivationBackwardParams>(node.params));
  const std::int64_t n = b.desc(node.output).numel();
  auto args = b.kernel("backward", "activation_backward", b.desc(node.output).dtype);
  args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(node.output).i64(n).i32(f.kind).f32(f.a).f32(f.b)
      .i32(f.gelu_tanh);
  b.enqueue_1d(std::move(args), n);
}

void opencl_max_pool2d_backward(LaunchBuilder& b, const Node& node) {
  const auto& p = std::get<Pool2dParams>(node.params);
  const PoolDims d = pool_dims(b.desc(node.inputs[0]).shape, p);
  auto args = b.kernel("backward", "max_pool2d_backward", b.desc(node.output).dtype);
  args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(node.output).i64(d.n * d.c).i64(d.h).i64(d.w).i64(d.p)
      .i64(d.q).i64(p.kernel[0]).i64(p.kernel[1]).i64(p.stride[0]).i64(p.stride[1]).i64(p.pad[0]).i64(p.pad[1])
      .i64(p.dilation[0]).i64(p.dilation[1]);
  b.enqueue_1d(std::move(args), d.n * d.c * d.h * d.w);
}

void opencl_depthwise_filter_gradient(LaunchBuilder& b, const Node& node) {
  const auto& p = std::get<Conv2dParams>(node.params);
  const ConvDims d = depthwise_gradient_dims(b.desc(node.inputs[0]).shape, b.desc(node.inputs[1]).shape, p);
  auto args = b.kernel("backward", "depthwise_filter_gradient", b.desc(node.output).dtype);
  args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(node.output).i64(d.n).i64(d.c).i64(d.h).i64(d.w)
      .i64(d.p).i64(d.q).i64(d.r).i64(d.s).i64(p.stride[0]).i64(p.stride[1]).i64(p.pad[0]).i64(p.pad[1])
      .i64(p.dilation[0]).i64(p.dilation[1]);
  b.enqueue_1d(std::move(args), d.c * d.r * d.s);
}

namespace {

// i64/i32 labels are checked on the host first, as gather's indices are (LaunchBuilder::check_indices):
// a label out of range throws, naming the node, before the kernel runs. Labels are one per row: few.
// The first node of the order that reads a labels tensor checks it; the loss and its gradient share one.
void check_labels_on_host(LaunchBuilder& b, const Node& node, std::int64_t classes) {
  const Tensor labels = node.inputs[1];
  if (b.claim_host_check(labels))
    b.check_indices(labels, [&node, classes](std::int64_t label) { label_coordinate(label, classes, node); });
}

}  // namespace

void opencl_softmax_cross_entropy(LaunchBuilder& b, const Node& node) {
  const TensorDesc& z = b.desc(node.inputs[0]);
  const std::int64_t classes = z.shape.back(), rows = z.numel() / classes;
  const DType labels = b.desc(node.inputs[1]).dtype;
  if (is_float(labels)) {
    auto args = b.kernel("backward", "softmax_cross_entropy", b.desc(node.output).dtype);
    args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(node.output).i64(rows).i64(classes);
    b.enqueue_1d(std::move(args), rows);
    return;
  }
  check_labels_on_host(b, node, classes);
  auto args = b.kernel("backward", "softmax_cross_entropy_index", b.desc(node.output).dtype);
  args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(node.output).i64(rows).i64(classes)
      .i32(labels == DType::i64 ? 1 : 0);
  b.enqueue_1d(std::move(args), rows);
}

void opencl_softmax_cross_entropy_backward(LaunchBuilder& b, const Node& node) {
  const TensorDesc& z = b.desc(node.inputs[0]);
  const std::int64_t classes = z.shape.back(), rows = z.numel() / classes;
  check_labels_on_host(b, node, classes);
  auto args = b.kernel("backward", "softmax_cross_entropy_backward", b.desc(node.output).dtype);
  args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(node.inputs[2]).tensor(node.output).i64(rows)
      .i64(classes).i32(b.desc(node.inputs[1]).dtype == DType::i64 ? 1 : 0);
  b.enqueue_1d(std::move(args), rows);
}

}  // namespace porta::detail
