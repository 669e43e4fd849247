#include "core/ref/kernels.hpp"

#include <cstddef>
#include <iterator>
#include <utility>

namespace porta::detail {
namespace {

// In OpKind order, so the checks below prove that the oracle answers for every op. (Comparing
// the function pointers with nullptr instead is not a constant expression under sanitizers.)
constexpr std::pair<OpKind, HostKernel> kernels[] = {
    {OpKind::MatMul, ref_matmul},
    {OpKind::Gemm, ref_gemm},
    {OpKind::Conv2d, ref_conv2d},
    {OpKind::Add, ref_add},
    {OpKind::Sub, ref_sub},
    {OpKind::Mul, ref_mul},
    {OpKind::Div, ref_div},
    {OpKind::Relu, ref_relu},
    {OpKind::Clip, ref_clip},
    {OpKind::Sigmoid, ref_sigmoid},
    {OpKind::Silu, ref_silu},
    {OpKind::Tanh, ref_tanh},
    {OpKind::Gelu, ref_gelu},
    {OpKind::BatchNorm, ref_batchnorm},
    {OpKind::MaxPool2d, ref_max_pool2d},
    {OpKind::AvgPool2d, ref_avg_pool2d},
    {OpKind::GlobalAvgPool, ref_global_avg_pool},
    {OpKind::Softmax, ref_softmax},
    {OpKind::Reshape, ref_reshape},
    {OpKind::Transpose, ref_strided_gather},
    {OpKind::Concat, ref_concat},
    {OpKind::Cast, ref_cast},
    {OpKind::Erf, ref_erf},
    {OpKind::Sqrt, ref_sqrt},
    {OpKind::Reciprocal, ref_reciprocal},
    {OpKind::HardSigmoid, ref_hard_sigmoid},
    {OpKind::HardSwish, ref_hard_swish},
    {OpKind::Pow, ref_pow},
    {OpKind::Reduce, ref_reduce},
    {OpKind::LayerNorm, ref_layer_norm},
    {OpKind::RmsNorm, ref_rms_norm},
    {OpKind::Slice, ref_strided_gather},
    {OpKind::Pad, ref_pad},
    {OpKind::Expand, ref_strided_gather},
    {OpKind::Gather, ref_gather},
    {OpKind::Compare, ref_compare},
    {OpKind::Logical, ref_logical},
    {OpKind::Where, ref_where},
    {OpKind::ActivationBackward, ref_activation_backward},
    {OpKind::MaxPool2dBackward, ref_max_pool2d_backward},
    {OpKind::SoftmaxCrossEntropy, ref_softmax_cross_entropy},
    {OpKind::Attention, ref_attention},
    {OpKind::Dropout, ref_dropout},
    {OpKind::DepthwiseFilterGradient, ref_depthwise_filter_gradient},
    {OpKind::SoftmaxCrossEntropyBackward, ref_softmax_cross_entropy_backward},
};

constexpr bool in_op_kind_order() {
  for (std::size_t i = 0; i < std::size(kernels); ++i) {
    if (kernels[i].first != static_cast<OpKind>(i)) return false;
  }
  return true;
}

static_assert(std::size(kernels) == op_kind_count, "every OpKind needs a reference kernel");
static_assert(in_op_kind_order(), "list the reference kernels in OpKind order");

constexpr HostKernelTable table = [] {
  HostKernelTable t{};
  for (const auto& [op, kernel] : kernels) t[static_cast<std::size_t>(op)] = kernel;
  return t;
}();

}  // namespace

const HostKernelTable& ref_kernels() { return table; }

}  // namespace porta::detail
