#pragma once
// cuBLASLt, cuBLAS and cuDNN as the cuda device's vendor provider (impl=vendor): cuBLASLt runs
// MatMul and Gemm (cuBLAS where it cannot), cuDNN runs Conv2d, and porta's kernels run every other
// op and the epilogues the libraries do not fuse. Shared declarations of the files in this folder.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cudnn.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "backends/gpu/plan/blas_call.hpp"
#include "backends/gpu/runtime/vendor.hpp"

namespace porta::detail::gpu_cuda {

void check_cublas(cublasStatus_t status, std::string_view device, std::string_view what);
void check_cudnn(cudnnStatus_t status, std::string_view device, std::string_view what);

cudaDataType cuda_data_type(DType t);
// f32 takes tf32 tensor cores only when allowed; f16 and bf16 accumulate in f32.
cublasComputeType_t cublas_compute_type(DType t, bool allow_tf32);
cublasOperation_t cublas_operation(const gpu::BlasOperand& operand);

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

// A convolution algorithm cuDNN measured fastest, with its workspace and math type.
struct ConvChoice {
  cudnnConvolutionFwdAlgo_t algorithm{};
  std::size_t workspace = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

// The measured choices per convolution shape (gpu::conv_key), shared by the programs compiled for
// one opened device, so that each shape is searched once there.
class ConvChoices {
 public:
  std::optional<ConvChoice> find(const std::string& key) const;
  void insert(const std::string& key, const ConvChoice& choice);

 private:
  mutable std::mutex mutex_;
  std::map<std::string, ConvChoice> choices_;
};

// The library handles of one program, bound to its stream, and their workspaces.
class CudaLibraries {
 public:
  CudaLibraries(std::shared_ptr<const DeviceContext> context, gpuStream_t stream, const CompileOptions& options,
                std::shared_ptr<ConvChoices> conv_choices);
  CudaLibraries(const CudaLibraries&) = delete;
  CudaLibraries& operator=(const CudaLibraries&) = delete;

  const DeviceContext& context() const noexcept { return *context_; }
  const CompileOptions& options() const noexcept { return options_; }
  cublasHandle_t blas() const noexcept { return blas_.get(); }
  cublasLtHandle_t lt() const noexcept { return lt_.get(); }
  // cuBLAS's workspace, which cuBLASLt's calls use too: both run in order on the program's stream.
  void* blas_workspace() const noexcept { return blas_workspace_.get(); }
  std::size_t blas_workspace_bytes() const noexcept;
  cudnnHandle_t dnn() const noexcept { return dnn_.get(); }
  // Grows the cuDNN workspace to at least `bytes`. Launches read it when they run, so it is final
  // once every node is planned, before the first run (and before any graph capture).
  void reserve_dnn_workspace(std::size_t bytes);
  void* dnn_workspace() const noexcept { return dnn_workspace_.get(); }
  std::size_t dnn_workspace_bytes() const noexcept { return dnn_workspace_bytes_; }
  ConvChoices& conv_choices() const noexcept { return *conv_choices_; }

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
  CudnnHandle dnn_;
  DeviceMemory dnn_workspace_;
  std::size_t dnn_workspace_bytes_ = 0;
  std::shared_ptr<ConvChoices> conv_choices_;
};

std::string cublas_unsupported_reason(const Graph& graph, const Node& node);
NodeLaunch cublas_gemm_launch(const CompiledGraph& graph, const Node& node, CudaLibraries& libraries);
// Empty when cuBLASLt is not given the product or has no algorithm for it (cuBLAS runs it then).
NodeLaunch cublaslt_gemm_launch(const CompiledGraph& graph, const Node& node, CudaLibraries& libraries);

// `query` is a cuDNN handle on the device, for the algorithm heuristics.
std::string cudnn_unsupported_reason(const Graph& graph, const Node& node, const CompileOptions& options,
                                     cudnnHandle_t query);
NodeLaunch cudnn_conv2d_launch(const CompiledGraph& graph, const Node& node, CudaLibraries& libraries);

}  // namespace porta::detail::gpu_cuda
