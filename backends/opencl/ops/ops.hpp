#pragma once
// The OpenCL backend's ops: each describes the kernel launches of one node (kernels/<op>.cl).
#include "backends/opencl/launch_builder.hpp"

namespace porta::detail {

using OpenClOp = void (*)(LaunchBuilder& builder, const Node& node);
OpenClOp opencl_op(OpKind op);  // every OpKind has one

// Activation codes of kernels/common.cl: porta::Activation's values, then those of unary ops only.
enum class ClActivation : std::int32_t { GeluTanh = 7, Clip = 8, Erf, Sqrt, Reciprocal, HardSigmoid, HardSwish };
constexpr std::int32_t activation_code(Activation a) noexcept { return static_cast<std::int32_t>(a); }
static_assert(activation_code(Activation::Gelu) == 6, "kernels/common.cl numbers activations as porta::Activation");

void opencl_matmul(LaunchBuilder& b, const Node& node);
void opencl_gemm(LaunchBuilder& b, const Node& node);
void opencl_conv2d(LaunchBuilder& b, const Node& node);
void opencl_binary(LaunchBuilder& b, const Node& node);  // add, sub, mul, div, pow
// relu, clip, sigmoid, silu, tanh, gelu, erf, sqrt, reciprocal, hard_sigmoid, hard_swish
void opencl_unary(LaunchBuilder& b, const Node& node);
void opencl_cast(LaunchBuilder& b, const Node& node);
void opencl_batchnorm(LaunchBuilder& b, const Node& node);
void opencl_max_pool2d(LaunchBuilder& b, const Node& node);
void opencl_avg_pool2d(LaunchBuilder& b, const Node& node);
void opencl_global_avg_pool(LaunchBuilder& b, const Node& node);
void opencl_softmax(LaunchBuilder& b, const Node& node);
void opencl_reshape(LaunchBuilder& b, const Node& node);
void opencl_strided_gather(LaunchBuilder& b, const Node& node);  // Transpose, Slice, Expand
void opencl_pad(LaunchBuilder& b, const Node& node);
void opencl_activation_backward(LaunchBuilder& b, const Node& node);
void opencl_max_pool2d_backward(LaunchBuilder& b, const Node& node);
void opencl_depthwise_filter_gradient(LaunchBuilder& b, const Node& node);
void opencl_softmax_cross_entropy(LaunchBuilder& b, const Node& node);
void opencl_softmax_cross_entropy_backward(LaunchBuilder& b, const Node& node);
void opencl_concat(LaunchBuilder& b, const Node& node);
void opencl_reduce(LaunchBuilder& b, const Node& node);
void opencl_norm(LaunchBuilder& b, const Node& node);  // layer_norm, rms_norm
// kernels/index_ops.cl. Gather reads its indices back to check them (a kernel cannot raise an error).
void opencl_gather(LaunchBuilder& b, const Node& node);
void opencl_compare(LaunchBuilder& b, const Node& node);
void opencl_logical(LaunchBuilder& b, const Node& node);
void opencl_where(LaunchBuilder& b, const Node& node);
// Strides of `operand` in the index space of the `result` it broadcasts to: 0 along broadcast dims.
Long8 broadcast_strides(const Shape& operand, const Shape& result);
void opencl_attention(LaunchBuilder& b, const Node& node);
void opencl_dropout(LaunchBuilder& b, const Node& node);

}  // namespace porta::detail
