#pragma once
// oneDNN as the CPU device's vendor provider (impl=vendor): it runs MatMul, Gemm and Conv2d, and
// porta's own kernels run every other op. Shared helpers of the files in this folder.
#include <dnnl.hpp>

#include "core/runtime/host_backend.hpp"

namespace porta::detail {

const HostVendorProvider& onednn_provider();

void onednn_matmul(const HostOpArgs& args);
void onednn_gemm(const HostOpArgs& args);
void onednn_conv2d(const HostOpArgs& args);

// Build the primitive descriptor the kernel above would use, and throw dnnl::error if oneDNN
// has no implementation for it on this CPU. Tensors' data may be null.
void onednn_check_matmul(const HostOpArgs& args);
void onednn_check_gemm(const HostOpArgs& args);
void onednn_check_conv2d(const HostOpArgs& args);

namespace onednn {

const dnnl::engine& engine();
dnnl::memory::data_type data_type(DType t);
// Sizes oneDNN's OpenMP team on this thread to the device's task arena. oneDNN fixes a
// primitive's thread count when it creates it, so this comes before any primitive is made.
void use_device_threads();
dnnl::stream stream();
// Reports the implementation oneDNN chose for `problem` (core/runtime/plan_log.hpp), e.g.
// "onednn brg:avx512_core".
void note_choice(std::string_view problem, const dnnl::primitive_desc_base& pd);
// Adds `activation` as an eltwise post-op.
void append_activation(dnnl::post_ops& ops, Activation activation);
dnnl::memory memory(const dnnl::memory::desc& desc, const std::byte* data);

}  // namespace onednn
}  // namespace porta::detail
