#include <mutex>

#include "backends/cuda/vendor/cuda_vendor.hpp"
#include "backends/gpu/runtime/check.hpp"
#include "porta/error.hpp"

namespace porta::detail::gpu_cuda {

void check_cublas(cublasStatus_t status, std::string_view device, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Error(ErrorCode::Internal, std::string(device) + ": " + std::string(what) + " failed: " +
                                       cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
}

void check_cudnn(cudnnStatus_t status, std::string_view device, std::string_view what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  throw Error(ErrorCode::Internal, std::string(device) + ": " + std::string(what) + " failed: " + cudnnGetErrorString(status));
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

CudnnHandle make_cudnn_handle(const DeviceContext& context) {
  context.make_current();
  cudnnHandle_t h = nullptr;
  check_cudnn(cudnnCreate(&h), context.spec(), "cudnnCreate");
  return CudnnHandle(h);
}

namespace {

// cuBLAS's recommendation for Hopper; enough for every earlier architecture.
constexpr std::size_t cublas_workspace_bytes = std::size_t{32} << 20;

}  // namespace

std::optional<ConvChoice> ConvChoices::find(const std::string& key) const {
  const std::lock_guard lock(mutex_);
  const auto it = choices_.find(key);
  return it == choices_.end() ? std::nullopt : std::optional<ConvChoice>(it->second);
}

void ConvChoices::insert(const std::string& key, const ConvChoice& choice) {
  const std::lock_guard lock(mutex_);
  choices_.emplace(key, choice);
}

CudaLibraries::CudaLibraries(std::shared_ptr<const DeviceContext> context, gpuStream_t stream,
                             const CompileOptions& options, std::shared_ptr<ConvChoices> conv_choices)
    : context_(std::move(context)), options_(options), conv_choices_(std::move(conv_choices)) {
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
  dnn_ = make_cudnn_handle(*context_);
  check_cudnn(cudnnSetStream(dnn_.get(), stream), context_->spec(), "cudnnSetStream");
}

std::size_t CudaLibraries::blas_workspace_bytes() const noexcept { return cublas_workspace_bytes; }

void CudaLibraries::reserve_dnn_workspace(std::size_t bytes) {
  if (bytes <= dnn_workspace_bytes_) return;
  dnn_workspace_.reset();
  dnn_workspace_ = allocate_device_memory(*context_, bytes, "the cuDNN workspace");
  dnn_workspace_bytes_ = bytes;
}

namespace {

class CudaSession final : public VendorSession {
 public:
  CudaSession(std::shared_ptr<const DeviceContext> context, gpuStream_t stream, const CompileOptions& options,
              std::shared_ptr<ConvChoices> conv_choices)
      : libraries_(std::move(context), stream, options, std::move(conv_choices)) {}

  NodeLaunch node_launch(const CompiledGraph& graph, const Node& node) override {
    switch (node.op) {
      case OpKind::MatMul:
      case OpKind::Gemm:
        if (NodeLaunch lt = cublaslt_gemm_launch(graph, node, libraries_)) return lt;
        return cublas_gemm_launch(graph, node, libraries_);
      case OpKind::Conv2d: return cudnn_conv2d_launch(graph, node, libraries_);
      default: return {};
    }
  }

 private:
  CudaLibraries libraries_;
};

class CudaProvider final : public VendorProvider {
 public:
  explicit CudaProvider(std::shared_ptr<const DeviceContext> context) : context_(std::move(context)) {}

  std::string unsupported_reason(const Graph& graph, const Node& node, const CompileOptions& options) const override {
    switch (node.op) {
      case OpKind::MatMul:
      case OpKind::Gemm: return cublas_unsupported_reason(graph, node);
      case OpKind::Conv2d: {
        const std::lock_guard lock(mutex_);
        try {
          if (query_ == nullptr) query_ = make_cudnn_handle(*context_);
        } catch (const Error& e) {
          return std::string("cuDNN does not start on this device: ") + e.what();
        }
        return cudnn_unsupported_reason(graph, node, options, query_.get());
      }
      default: return {};  // porta's kernel runs it
    }
  }

  std::unique_ptr<VendorSession> session(std::shared_ptr<const DeviceContext> context, gpuStream_t stream,
                                         const CompileOptions& options) const override {
    return std::make_unique<CudaSession>(std::move(context), stream, options, conv_choices_);
  }

 private:
  std::shared_ptr<const DeviceContext> context_;
  mutable std::mutex mutex_;
  mutable CudnnHandle query_;  // for the algorithm heuristics, made on first use
  std::shared_ptr<ConvChoices> conv_choices_ = std::make_shared<ConvChoices>();
};

}  // namespace

std::shared_ptr<const VendorProvider> make_vendor_provider(std::shared_ptr<const DeviceContext> context) {
  return std::make_shared<CudaProvider>(std::move(context));
}

}  // namespace porta::detail::gpu_cuda
