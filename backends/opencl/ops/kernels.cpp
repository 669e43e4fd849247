#include <cstddef>
#include <iterator>
#include <utility>

#include "backends/opencl/ops/ops.hpp"

namespace porta::detail {
namespace {

// In OpKind order, checked at compile time, so every op has a launcher.
constexpr std::pair<OpKind, OpenClOp> ops[] = {
    {OpKind::MatMul, opencl_matmul},
    {OpKind::Gemm, opencl_gemm},
    {OpKind::Conv2d, opencl_conv2d},
    {OpKind::Add, opencl_binary},
    {OpKind::Sub, opencl_binary},
    {OpKind::Mul, opencl_binary},
    {OpKind::Div, opencl_binary},
    {OpKind::Relu, opencl_unary},
    {OpKind::Clip, opencl_unary},
    {OpKind::Sigmoid, opencl_unary},
    {OpKind::Silu, opencl_unary},
    {OpKind::Tanh, opencl_unary},
    {OpKind::Gelu, opencl_unary},
    {OpKind::BatchNorm, opencl_batchnorm},
    {OpKind::MaxPool2d, opencl_max_pool2d},
    {OpKind::AvgPool2d, opencl_avg_pool2d},
    {OpKind::GlobalAvgPool, opencl_global_avg_pool},
    {OpKind::Softmax, opencl_softmax},
    {OpKind::Reshape, opencl_reshape},
    {OpKind::Transpose, opencl_strided_gather},
    {OpKind::Concat, opencl_concat},
    {OpKind::Cast, opencl_cast},
    {OpKind::Erf, opencl_unary},
    {OpKind::Sqrt, opencl_unary},
    {OpKind::Reciprocal, opencl_unary},
    {OpKind::HardSigmoid, opencl_unary},
    {OpKind::HardSwish, opencl_unary},
    {OpKind::Pow, opencl_binary},
    {OpKind::Reduce, opencl_reduce},
    {OpKind::LayerNorm, opencl_norm},
    {OpKind::RmsNorm, opencl_norm},
    {OpKind::Slice, opencl_strided_gather},
    {OpKind::Pad, opencl_pad},
    {OpKind::Expand, opencl_strided_gather},
    {OpKind::Gather, opencl_gather},
    {OpKind::Compare, opencl_compare},
    {OpKind::Logical, opencl_logical},
    {OpKind::Where, opencl_where},
    {OpKind::ActivationBackward, opencl_activation_backward},
    {OpKind::MaxPool2dBackward, opencl_max_pool2d_backward},
    {OpKind::SoftmaxCrossEntropy, opencl_softmax_cross_entropy},
    {OpKind::Attention, opencl_attention},
    {OpKind::Dropout, opencl_dropout},
    {OpKind::DepthwiseFilterGradient, opencl_depthwise_filter_gradient},
    {OpKind::SoftmaxCrossEntropyBackward, opencl_softmax_cross_entropy_backward},
};

constexpr bool in_op_kind_order() {
  for (std::size_t i = 0; i < std::size(ops); ++i)
    if (ops[i].first != static_cast<OpKind>(i)) return false;
  return true;
}
static_assert(std::size(ops) == op_kind_count, "every OpKind needs an OpenCL launcher");
static_assert(in_op_kind_order(), "list the OpenCL launchers in OpKind order");

}  // namespace

OpenClOp opencl_op(OpKind op) { return ops[static_cast<std::size_t>(op)].second; }

}  // namespace porta::detail
