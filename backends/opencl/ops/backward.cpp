// Launchers of kernels/backward.cl.
#include <variant>
#include <vector>

#include "backends/opencl/cl_error.hpp"
#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void opencl_activation_backward(LaunchBuilder& b, const Node& node) {
  const auto& p = std::get<ActivationBackwardParams>(node.params);
  std::int32_t kind = 0;  // GRAD_* of kernels/backward.cl
  float lo = 0.0f, hi = 0.0f;
  switch (p.activation) {
    case OpKind::Clip: kind = 1, lo = p.clip.min, hi = p.clip.max; break;
    case OpKind::Gelu: kind = 2; break;
    case OpKind::HardSigmoid: kind = 3, lo = p.hard_sigmoid.alpha, hi = p.hard_sigmoid.beta; break;
    case OpKind::HardSwish: kind = 4; break;
    default: break;  // Relu
  }
  const std::int64_t n = b.desc(node.output).numel();
  auto args = b.kernel("backward", "activation_backward", b.desc(node.output).dtype);
  args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(node.output).i64(n).i32(kind).f32(lo).f32(hi)
      .i32(p.gelu.tanh_approximation ? 1 : 0);
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

namespace {

// A kernel cannot raise an error, so i64/i32 labels are read back and checked on the host first (a
// blocking read, in queue order), as gather's indices are: a label out of range throws, naming the
// node, before the kernel runs. Labels are one per row: few. The first node of the order that reads
// a labels tensor checks it; the loss and its gradient share one.
void check_labels_on_host(LaunchBuilder& b, const Node& node, std::int64_t classes) {
  const Tensor labels = node.inputs[1];
  if (!b.claim_host_check(labels)) return;
  b.library({[&node, labels, desc = b.desc(labels), classes](cl_command_queue queue, const LocateTensor& locate,
                                                              cl_event*) {
    std::vector<std::byte> bytes(desc.bytes());
    const ClTensorRef at = locate(labels);
    check_cl(clEnqueueReadBuffer(queue, at.mem, CL_TRUE, at.offset, bytes.size(), bytes.data(), 0, nullptr, nullptr),
             "clEnqueueReadBuffer");
    check_labels(bytes.data(), desc.numel(), desc.dtype, classes, node);
  }});
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
