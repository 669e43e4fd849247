#pragma once
// The naive reference kernels: single-threaded, accumulating in double, the oracle every other
// backend is tested against.
#include "core/runtime/host_backend.hpp"

namespace porta::detail {

const HostKernelTable& ref_kernels();

void ref_matmul(const HostOpArgs& args);
void ref_gemm(const HostOpArgs& args);
void ref_conv2d(const HostOpArgs& args);

void ref_add(const HostOpArgs& args);
void ref_sub(const HostOpArgs& args);
void ref_mul(const HostOpArgs& args);
void ref_div(const HostOpArgs& args);
void ref_relu(const HostOpArgs& args);
void ref_clip(const HostOpArgs& args);
void ref_sigmoid(const HostOpArgs& args);
void ref_silu(const HostOpArgs& args);
void ref_tanh(const HostOpArgs& args);
void ref_gelu(const HostOpArgs& args);
void ref_cast(const HostOpArgs& args);
void ref_erf(const HostOpArgs& args);
void ref_sqrt(const HostOpArgs& args);
void ref_reciprocal(const HostOpArgs& args);
void ref_hard_sigmoid(const HostOpArgs& args);
void ref_hard_swish(const HostOpArgs& args);
void ref_pow(const HostOpArgs& args);
void ref_reduce(const HostOpArgs& args);
void ref_layer_norm(const HostOpArgs& args);
void ref_rms_norm(const HostOpArgs& args);

void ref_batchnorm(const HostOpArgs& args);

void ref_max_pool2d(const HostOpArgs& args);
void ref_avg_pool2d(const HostOpArgs& args);
void ref_global_avg_pool(const HostOpArgs& args);

void ref_softmax(const HostOpArgs& args);

void ref_reshape(const HostOpArgs& args);
void ref_strided_gather(const HostOpArgs& args);  // Transpose, Slice, Expand
void ref_pad(const HostOpArgs& args);
void ref_concat(const HostOpArgs& args);
void ref_attention(const HostOpArgs& args);
void ref_dropout(const HostOpArgs& args);

void ref_gather(const HostOpArgs& args);
void ref_compare(const HostOpArgs& args);
void ref_logical(const HostOpArgs& args);
void ref_where(const HostOpArgs& args);

void ref_activation_backward(const HostOpArgs& args);
void ref_max_pool2d_backward(const HostOpArgs& args);
void ref_depthwise_filter_gradient(const HostOpArgs& args);
void ref_softmax_cross_entropy(const HostOpArgs& args);
void ref_softmax_cross_entropy_backward(const HostOpArgs& args);

}  // namespace porta::detail
