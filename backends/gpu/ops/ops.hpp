#pragma once
// The kernel launchers of ops/*.cu, one per op family, called by the runtime with arguments from
// plan/op_args and device pointers bound. They enqueue on `stream` and do not wait; the caller
// checks for launch errors.
#include "backends/gpu/compat/compat.hpp"
#include "backends/gpu/plan/kernel_args.hpp"
#include "backends/gpu/plan/launch.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {

void launch_binary(const gpu::BinaryArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_unary(const gpu::UnaryArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_epilogue(const gpu::EpilogueArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_batchnorm(const gpu::BatchNormArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_pool(const gpu::PoolArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_global_avg_pool(const gpu::RowArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_softmax(const gpu::RowArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_norm(const gpu::NormArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_reduce(const gpu::ReduceArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_gather(const gpu::GatherArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_pad(const gpu::PadArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
// GEMM and conv run the plan made at prepare (gpu::plan_gemm, gpu::plan_conv).
void launch_gemm(const gpu::GemmArgs& args, const gpu::GemmPlan& plan, gpuStream_t stream);
void launch_conv2d(const gpu::ConvArgs& args, const gpu::ConvPlan& plan, gpuStream_t stream);
void launch_activation_backward(const gpu::ActivationBackwardArgs& args, const gpu::DeviceLimits& limits,
                                gpuStream_t stream);
void launch_max_pool_backward(const gpu::MaxPoolBackwardArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_depthwise_gradient(const gpu::DepthwiseGradientArgs& args, const gpu::DeviceLimits& limits,
                               gpuStream_t stream);
void launch_softmax_cross_entropy(const gpu::SoftmaxCrossEntropyArgs& args, const gpu::DeviceLimits& limits,
                                  gpuStream_t stream);
void launch_softmax_cross_entropy_backward(const gpu::SoftmaxCrossEntropyBackwardArgs& args,
                                           const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_attention(const gpu::AttentionArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_dropout(const gpu::DropoutArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_index_gather(const gpu::IndexGatherArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
// Cast with an integer or bool operand or result (ops/cast.cu).
void launch_integer_cast(const gpu::UnaryArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_fma_probe(const gpu::FmaProbeArgs& args, gpuStream_t stream);
// Comparisons, logical ops and where (ops/logic.cu).
void launch_compare(const gpu::CompareArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_logical(const gpu::LogicalArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);
void launch_where(const gpu::WhereArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream);

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
