#pragma once
// The CPU backend's op kernels: oneTBB-parallel, f32 arithmetic, deterministic run to run.
#include "core/runtime/host_backend.hpp"

namespace porta::detail {

const HostKernelTable& cpu_kernels();
// What the kernels above work out once per node, when a graph is prepared.
const HostPrepareTable& cpu_preparers();

std::shared_ptr<const HostNodeState> cpu_prepare_conv2d(const Graph& graph, const Node& node);
std::shared_ptr<const HostNodeState> cpu_prepare_matmul(const Graph& graph, const Node& node);
std::shared_ptr<const HostNodeState> cpu_prepare_gemm(const Graph& graph, const Node& node);

void cpu_matmul(const HostOpArgs& args);
void cpu_gemm(const HostOpArgs& args);
void cpu_conv2d(const HostOpArgs& args);

void cpu_add(const HostOpArgs& args);
void cpu_sub(const HostOpArgs& args);
void cpu_mul(const HostOpArgs& args);
void cpu_div(const HostOpArgs& args);
void cpu_relu(const HostOpArgs& args);
void cpu_clip(const HostOpArgs& args);
void cpu_sigmoid(const HostOpArgs& args);
void cpu_silu(const HostOpArgs& args);
void cpu_tanh(const HostOpArgs& args);
void cpu_gelu(const HostOpArgs& args);
void cpu_cast(const HostOpArgs& args);
void cpu_erf(const HostOpArgs& args);
void cpu_sqrt(const HostOpArgs& args);
void cpu_reciprocal(const HostOpArgs& args);
void cpu_hard_sigmoid(const HostOpArgs& args);
void cpu_hard_swish(const HostOpArgs& args);
void cpu_pow(const HostOpArgs& args);
void cpu_reduce(const HostOpArgs& args);
void cpu_layer_norm(const HostOpArgs& args);
void cpu_rms_norm(const HostOpArgs& args);

void cpu_batchnorm(const HostOpArgs& args);

void cpu_max_pool2d(const HostOpArgs& args);
void cpu_avg_pool2d(const HostOpArgs& args);
void cpu_global_avg_pool(const HostOpArgs& args);

void cpu_softmax(const HostOpArgs& args);

void cpu_reshape(const HostOpArgs& args);
void cpu_transpose(const HostOpArgs& args);
void cpu_concat(const HostOpArgs& args);
void cpu_strided_gather(const HostOpArgs& args);  // Slice and Expand
void cpu_pad(const HostOpArgs& args);
void cpu_activation_backward(const HostOpArgs& args);
void cpu_max_pool2d_backward(const HostOpArgs& args);
void cpu_softmax_cross_entropy(const HostOpArgs& args);
void cpu_softmax_cross_entropy_backward(const HostOpArgs& args);
void cpu_attention(const HostOpArgs& args);
void cpu_dropout(const HostOpArgs& args);
void cpu_depthwise_filter_gradient(const HostOpArgs& args);

void cpu_gather(const HostOpArgs& args);
void cpu_compare(const HostOpArgs& args);
void cpu_logical(const HostOpArgs& args);
void cpu_where(const HostOpArgs& args);

}  // namespace porta::detail
