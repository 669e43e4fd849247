#pragma once
// cuBLASLt, cuBLAS and cuDNN as the cuda device's vendor provider (impl=vendor): cuBLASLt runs
// MatMul and Gemm (cuBLAS where it cannot), cuDNN runs Conv2d where it was found when porta was
// built, and porta's kernels run every other op and the epilogues the libraries do not fuse. Shared
// declarations of the files in this folder.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <memory>
#include <string>
#include <string_view>

#include "backends/gpu/plan/blas_call.hpp"
#include "backends/gpu/runtime/vendor.hpp"

namespace porta::detail::gpu_cuda {

void check_cublas(cublasStatus_t status, std::string_view device, std::string_view what);

cudaDataType cuda_data_type(DType t);
// f32 takes tf32 tensor cores only when allowed; f16 and bf16 accumulate in f32.
cublasComputeType_t cublas_compute_type(DType t, bool allow_tf32);
cublasOperation_t cublas_operation(const gpu::BlasOperand& operand);

struct FreeDeviceMemory {
  void operator()(void* p) const noexcept { (void)cudaFree(p); }
};
using DeviceMemory = std::unique_ptr<void, FreeDeviceMemory>;
DeviceMemory allocate_device_memory(const DeviceContext& context, std::size_t bytes, std::string_view what);

// The BLAS handles of one program, bound to its stream, and their workspace.
class CudaLibraries {
 public:
  CudaLibraries(std::shared_ptr<const DeviceContext> context, gpuStream_t stream, const CompileOptions& options);
  CudaLibraries(const CudaLibraries&) = delete;
  CudaLibraries& operator=(const CudaLibraries&) = delete;

  const DeviceContext& context() const noexcept { return *context_; }
  const CompileOptions& options() const noexcept { return options_; }
  cublasHandle_t blas() const noexcept { return blas_.get(); }
  cublasLtHandle_t lt() const noexcept { return lt_.get(); }
  // cuBLAS's workspace, which cuBLASLt's calls use too: both run in order on the program's stream.
  void* blas_workspace() const noexcept { return blas_workspace_.get(); }
  std::size_t blas_workspace_bytes() const noexcept;

 private:
  struct DestroyCublas {
    void operator()(cublasHandle_t h) const noexcept { (void)cublasDestroy(h); }
  };
  std::shared_ptr<const DeviceContext> context_;
  CompileOptions options_;
  struct DestroyCublasLt {
    void operator()(cublasLtHandle_t h) const noexcept { (void)cublasLtDestroy(h); }
  };
  std::unique_ptr<std::remove_pointer_t<cublasHandle_t>, DestroyCublas> blas_;
  std::unique_ptr<std::remove_pointer_t<cublasLtHandle_t>, DestroyCublasLt> lt_;
  DeviceMemory blas_workspace_;  // cuBLAS's own, so that it never allocates during graph capture
};

std::string cublas_unsupported_reason(const Graph& graph, const Node& node);
NodeLaunch cublas_gemm_launch(const CompiledGraph& graph, const Node& node, CudaLibraries& libraries);
// Empty when cuBLASLt is not given the product or has no algorithm for it (cuBLAS runs it then).
NodeLaunch cublaslt_gemm_launch(const CompiledGraph& graph, const Node& node, CudaLibraries& libraries);

// cuDNN's provider of Conv2d (cudnn_conv2d.cpp), in builds where cuDNN was found.
std::shared_ptr<const VendorProvider> make_cudnn_provider(std::shared_ptr<const DeviceContext> context);

}  // namespace porta::detail::gpu_cuda
