#pragma once
// cuBLAS and cuDNN as the cuda device's vendor provider (impl=vendor): cuBLAS runs MatMul and
// Gemm, cuDNN runs Conv2d, and porta's kernels run every other op and the epilogues the libraries
// do not fuse. Shared declarations of the files in this folder.
#include <cublas_v2.h>
#include <cudnn.h>

#include <memory>
#include <string>
#include <string_view>

#include "backends/gpu/runtime/vendor.hpp"

namespace porta::detail::gpu_cuda {

void check_cublas(cublasStatus_t status, std::string_view device, std::string_view what);
void check_cudnn(cudnnStatus_t status, std::string_view device, std::string_view what);

struct FreeDeviceMemory {
  void operator()(void* p) const noexcept { (void)cudaFree(p); }
};
using DeviceMemory = std::unique_ptr<void, FreeDeviceMemory>;
DeviceMemory allocate_device_memory(const DeviceContext& context, std::size_t bytes, std::string_view what);

struct DestroyCudnn {
  void operator()(cudnnHandle_t h) const noexcept { (void)cudnnDestroy(h); }
};
using CudnnHandle = std::unique_ptr<std::remove_pointer_t<cudnnHandle_t>, DestroyCudnn>;
CudnnHandle make_cudnn_handle(const DeviceContext& context);

// The library handles of one program, bound to its stream, and their workspaces.
class CudaLibraries {
 public:
  CudaLibraries(std::shared_ptr<const DeviceContext> context, gpuStream_t stream, const CompileOptions& options);
  CudaLibraries(const CudaLibraries&) = delete;
  CudaLibraries& operator=(const CudaLibraries&) = delete;

  const DeviceContext& context() const noexcept { return *context_; }
  const CompileOptions& options() const noexcept { return options_; }
  cublasHandle_t blas() const noexcept { return blas_.get(); }
  cudnnHandle_t dnn() const noexcept { return dnn_.get(); }
  // Grows the cuDNN workspace to at least `bytes`. Launches read it when they run, so it is final
  // once every node is planned, before the first run (and before any graph capture).
  void reserve_dnn_workspace(std::size_t bytes);
  void* dnn_workspace() const noexcept { return dnn_workspace_.get(); }
  std::size_t dnn_workspace_bytes() const noexcept { return dnn_workspace_bytes_; }

 private:
  struct DestroyCublas {
    void operator()(cublasHandle_t h) const noexcept { (void)cublasDestroy(h); }
  };
  std::shared_ptr<const DeviceContext> context_;
  CompileOptions options_;
  std::unique_ptr<std::remove_pointer_t<cublasHandle_t>, DestroyCublas> blas_;
  DeviceMemory blas_workspace_;  // cuBLAS's own, so that it never allocates during graph capture
  CudnnHandle dnn_;
  DeviceMemory dnn_workspace_;
  std::size_t dnn_workspace_bytes_ = 0;
};

std::string cublas_unsupported_reason(const Graph& graph, const Node& node);
NodeLaunch cublas_gemm_launch(const CompiledGraph& graph, const Node& node, CudaLibraries& libraries);

// `query` is a cuDNN handle on the device, for the algorithm heuristics.
std::string cudnn_unsupported_reason(const Graph& graph, const Node& node, const CompileOptions& options,
                                     cudnnHandle_t query);
NodeLaunch cudnn_conv2d_launch(const CompiledGraph& graph, const Node& node, CudaLibraries& libraries);

}  // namespace porta::detail::gpu_cuda
