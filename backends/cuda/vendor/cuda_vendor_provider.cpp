#include "backends/cuda/vendor/cuda_vendor.hpp"
#include "backends/gpu/runtime/check.hpp"
#include "porta/error.hpp"

namespace porta::detail::gpu_cuda {

void check_cublas(cublasStatus_t status, std::string_view device, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Error(ErrorCode::Internal, std::string(device) + ": " + std::string(what) + " failed: " +
                                       cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
}

DeviceMemory allocate_device_memory(const DeviceContext& context, std::size_t bytes, std::string_view what) {
  void* p = nullptr;
  const cudaError_t error = cudaMalloc(&p, bytes);
  if (error == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    throw Error(ErrorCode::OutOfMemory, context.spec() + ": allocating " + std::to_string(bytes) + " bytes for " +
                                            std::string(what) + " failed");
  }
  check(error, context.spec(), "allocating " + std::string(what));
  return DeviceMemory(p);
}

namespace {

// cuBLAS's recommendation for Hopper; enough for every earlier architecture.
constexpr std::size_t cublas_workspace_bytes = std::size_t{32} << 20;

}  // namespace

CudaLibraries::CudaLibraries(std::shared_ptr<const DeviceContext> context, gpuStream_t stream,
                             const CompileOptions& options)
    : context_(std::move(context)), options_(options) {
  context_->make_current();
  cublasHandle_t blas = nullptr;
  check_cublas(cublasCreate(&blas), context_->spec(), "cublasCreate");
  blas_.reset(blas);
  cublasLtHandle_t lt = nullptr;
  check_cublas(cublasLtCreate(&lt), context_->spec(), "cublasLtCreate");
  lt_.reset(lt);
  blas_workspace_ = allocate_device_memory(*context_, cublas_workspace_bytes, "the cuBLAS workspace");
  check_cublas(cublasSetStream(blas, stream), context_->spec(), "cublasSetStream");
  check_cublas(cublasSetWorkspace(blas, blas_workspace_.get(), cublas_workspace_bytes), context_->spec(),
               "cublasSetWorkspace");
}

std::size_t CudaLibraries::blas_workspace_bytes() const noexcept { return cublas_workspace_bytes; }

namespace {

constexpr const char* no_cudnn = "this build of porta has no cuDNN (not found when it was built)";

// cuDNN's provider where this build has one.
std::shared_ptr<const VendorProvider> cudnn_provider([[maybe_unused]] std::shared_ptr<const DeviceContext> context) {
#if defined(PORTA_CUDA_CUDNN)
  return make_cudnn_provider(std::move(context));
#else
  return nullptr;
#endif
}

class CudaSession final : public VendorSession {
 public:
  CudaSession(std::shared_ptr<const DeviceContext> context, gpuStream_t stream, const CompileOptions& options,
              std::unique_ptr<VendorSession> dnn)
      : libraries_(std::move(context), stream, options), dnn_(std::move(dnn)) {}

  NodeLaunch node_launch(const CompiledGraph& graph, const Node& node) override {
    static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
    switch (node.op) {
      case OpKind::MatMul:
      case OpKind::Gemm:
        if (NodeLaunch lt = cublaslt_gemm_launch(graph, node, libraries_)) return lt;
        return cublas_gemm_launch(graph, node, libraries_);
      case OpKind::Conv2d:
        if (dnn_ == nullptr) throw Error(ErrorCode::Unsupported, "Conv2d '" + node.name + "': " + no_cudnn);
        return dnn_->node_launch(graph, node);
      default: return {};
    }
  }

 private:
  CudaLibraries libraries_;
  std::unique_ptr<VendorSession> dnn_;
};

class CudaProvider final : public VendorProvider {
 public:
  explicit CudaProvider(std::shared_ptr<const DeviceContext> context) : dnn_(cudnn_provider(std::move(context))) {}

  std::string unsupported_reason(const Graph& graph, const Node& node, const CompileOptions& options) const override {
    static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
    switch (node.op) {
      case OpKind::MatMul:
      case OpKind::Gemm: return cublas_unsupported_reason(graph, node);
      case OpKind::Conv2d:
        if (dnn_ == nullptr) return no_cudnn;
        return dnn_->unsupported_reason(graph, node, options);
      default: return {};  // porta's kernel runs it
    }
  }

  std::unique_ptr<VendorSession> session(std::shared_ptr<const DeviceContext> context, gpuStream_t stream,
                                         const CompileOptions& options) const override {
    return std::make_unique<CudaSession>(context, stream, options,
                                         dnn_ ? dnn_->session(context, stream, options) : nullptr);
  }

 private:
  std::shared_ptr<const VendorProvider> dnn_;
};

}  // namespace

std::shared_ptr<const VendorProvider> make_vendor_provider(std::shared_ptr<const DeviceContext> context) {
  return std::make_shared<CudaProvider>(std::move(context));
}

}  // namespace porta::detail::gpu_cuda
