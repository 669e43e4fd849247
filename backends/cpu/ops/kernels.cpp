#include "backends/cpu/ops/ops.hpp"

#include <cstddef>
#include <iterator>
#include <utility>

namespace porta::detail {
namespace {

// In OpKind order, so the checks below prove that every op has a CPU kernel. (Comparing the
// function pointers with nullptr instead is not a constant expression under sanitizers.)
constexpr std::pair<OpKind, HostKernel> kernels[] = {
    {OpKind::MatMul, cpu_matmul},
    {OpKind::Gemm, cpu_gemm},
    {OpKind::Conv2d, cpu_conv2d},
    {OpKind::Add, cpu_add},
    {OpKind::Sub, cpu_sub},
    {OpKind::Mul, cpu_mul},
    {OpKind::Div, cpu_div},
    {OpKind::Relu, cpu_relu},
    {OpKind::Clip, cpu_clip},
    {OpKind::Sigmoid, cpu_sigmoid},
    {OpKind::Silu, cpu_silu},
    {OpKind::Tanh, cpu_tanh},
    {OpKind::Gelu, cpu_gelu},
    {OpKind::BatchNorm, cpu_batchnorm},
    {OpKind::MaxPool2d, cpu_max_pool2d},
    {OpKind::AvgPool2d, cpu_avg_pool2d},
    {OpKind::GlobalAvgPool, cpu_global_avg_pool},
    {OpKind::Softmax, cpu_softmax},
    {OpKind::Reshape, cpu_reshape},
    {OpKind::Transpose, cpu_transpose},
    {OpKind::Concat, cpu_concat},
    {OpKind::Cast, cpu_cast},
    {OpKind::Erf, cpu_erf},
    {OpKind::Sqrt, cpu_sqrt},
    {OpKind::Reciprocal, cpu_reciprocal},
    {OpKind::HardSigmoid, cpu_hard_sigmoid},
    {OpKind::HardSwish, cpu_hard_swish},
    {OpKind::Pow, cpu_pow},
    {OpKind::Reduce, cpu_reduce},
    {OpKind::LayerNorm, cpu_layer_norm},
    {OpKind::RmsNorm, cpu_rms_norm},
    {OpKind::Slice, cpu_strided_gather},
    {OpKind::Pad, cpu_pad},
    {OpKind::Expand, cpu_strided_gather},
    {OpKind::Gather, cpu_gather},
    {OpKind::Compare, cpu_compare},
    {OpKind::Logical, cpu_logical},
    {OpKind::Where, cpu_where},
    {OpKind::ActivationBackward, cpu_activation_backward},
    {OpKind::MaxPool2dBackward, cpu_max_pool2d_backward},
    {OpKind::SoftmaxCrossEntropy, cpu_softmax_cross_entropy},
    {OpKind::Attention, cpu_attention},
    {OpKind::Dropout, cpu_dropout},
    {OpKind::DepthwiseFilterGradient, cpu_depthwise_filter_gradient},
    {OpKind::SoftmaxCrossEntropyBackward, cpu_softmax_cross_entropy_backward},
};

constexpr bool in_op_kind_order() {
  for (std::size_t i = 0; i < std::size(kernels); ++i) {
    if (kernels[i].first != static_cast<OpKind>(i)) return false;
  }
  return true;
}

static_assert(std::size(kernels) == op_kind_count, "every OpKind needs a CPU kernel");
static_assert(in_op_kind_order(), "list the CPU kernels in OpKind order");

constexpr HostKernelTable table = [] {
  HostKernelTable t{};
  for (const auto& [op, kernel] : kernels) t[static_cast<std::size_t>(op)] = kernel;
  return t;
}();

const HostPrepareTable preparers = [] {
  HostPrepareTable t{};
  t[static_cast<std::size_t>(OpKind::Conv2d)] = cpu_prepare_conv2d;
  t[static_cast<std::size_t>(OpKind::MatMul)] = cpu_prepare_matmul;
  t[static_cast<std::size_t>(OpKind::Gemm)] = cpu_prepare_gemm;
  return t;
}();

}  // namespace

const HostKernelTable& cpu_kernels() { return table; }
const HostPrepareTable& cpu_preparers() { return preparers; }

}  // namespace porta::detail
