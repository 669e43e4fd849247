// Launchers of kernels/backward.cl.
#include <variant>

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

void opencl_softmax_cross_entropy(LaunchBuilder& b, const Node& node) {
  const TensorDesc& z = b.desc(node.inputs[0]);
  const std::int64_t classes = z.shape.back(), rows = z.numel() / classes;
  auto args = b.kernel("backward", "softmax_cross_entropy", b.desc(node.output).dtype);
  args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(node.output).i64(rows).i64(classes);
  b.enqueue_1d(std::move(args), rows);
}

}  // namespace porta::detail
