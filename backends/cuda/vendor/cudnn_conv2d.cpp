// Conv2d through cuDNN's convolution API on porta's NCHW buffers: the cuda vendor provider's
// convolutions, in builds where cuDNN was found. The algorithm is chosen when the program is
// prepared: the fastest by cuDNN's own timing (cudnnFindConvolutionForwardAlgorithmEx on scratch
// buffers of the convolution's sizes, as frameworks' benchmark mode does), searched once per shape
// (gpu::conv_key) and device and kept in the provider's ConvChoices; cuDNN's heuristics
// (cudnnGetConvolutionForwardAlgorithm_v7) when the scratch buffers do not fit, and to say whether
// cuDNN runs a convolution at all. The workspace is the program's. Bias + ReLU in f32 (with
// the residual, if any) fuse into cudnnConvolutionBiasActivationForward; any other bias, residual
// or activation runs in porta's epilogue kernel after the convolution.
#include <cudnn.h>

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <variant>
#include <vector>

#include "backends/cuda/vendor/cuda_vendor.hpp"
#include "backends/gpu/ops/ops.hpp"
#include "backends/gpu/plan/op_args.hpp"
#include "backends/gpu/runtime/check.hpp"
#include "core/runtime/op_math.hpp"
#include "porta/error.hpp"

namespace porta::detail::gpu_cuda {
namespace {

void check_cudnn(cudnnStatus_t status, std::string_view device, std::string_view what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  throw Error(ErrorCode::Internal, std::string(device) + ": " + std::string(what) + " failed: " + cudnnGetErrorString(status));
}

struct DestroyCudnn {
  void operator()(cudnnHandle_t h) const noexcept { (void)cudnnDestroy(h); }
};
using CudnnHandle = std::unique_ptr<std::remove_pointer_t<cudnnHandle_t>, DestroyCudnn>;

CudnnHandle make_cudnn_handle(const DeviceContext& context) {
  context.make_current();
  cudnnHandle_t h = nullptr;
  check_cudnn(cudnnCreate(&h), context.spec(), "cudnnCreate");
  return CudnnHandle(h);
}

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
  std::optional<ConvChoice> find(const std::string& key) const {
    const std::lock_guard lock(mutex_);
    const auto it = choices_.find(key);
    return it == choices_.end() ? std::nullopt : std::optional<ConvChoice>(it->second);
  }
  void insert(const std::string& key, const ConvChoice& choice) {
    const std::lock_guard lock(mutex_);
    choices_.emplace(key, choice);
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, ConvChoice> choices_;
};

// The cuDNN handle of one program, bound to its stream, and its workspace.
class CudnnLibrary {
 public:
  CudnnLibrary(std::shared_ptr<const DeviceContext> context, gpuStream_t stream, const CompileOptions& options,
               std::shared_ptr<ConvChoices> conv_choices)
      : context_(std::move(context)), options_(options), dnn_(make_cudnn_handle(*context_)),
        conv_choices_(std::move(conv_choices)) {
    check_cudnn(cudnnSetStream(dnn_.get(), stream), context_->spec(), "cudnnSetStream");
  }

  const DeviceContext& context() const noexcept { return *context_; }
  const CompileOptions& options() const noexcept { return options_; }
  cudnnHandle_t dnn() const noexcept { return dnn_.get(); }
  // Grows the workspace to at least `bytes`. Launches read it when they run, so it is final once
  // every node is planned, before the first run (and before any graph capture).
  void reserve_workspace(std::size_t bytes) {
    if (bytes <= workspace_bytes_) return;
    workspace_.reset();
    workspace_ = allocate_device_memory(*context_, bytes, "the cuDNN workspace");
    workspace_bytes_ = bytes;
  }
  void* workspace() const noexcept { return workspace_.get(); }
  std::size_t workspace_bytes() const noexcept { return workspace_bytes_; }
  ConvChoices& conv_choices() const noexcept { return *conv_choices_; }

 private:
  std::shared_ptr<const DeviceContext> context_;
  CompileOptions options_;
  CudnnHandle dnn_;
  DeviceMemory workspace_;
  std::size_t workspace_bytes_ = 0;
  std::shared_ptr<ConvChoices> conv_choices_;
};

// The most workspace a convolution algorithm may ask for.
constexpr std::size_t workspace_limit = std::size_t{512} << 20;

cudnnDataType_t data_type(DType t) {
  switch (t) {
    case DType::f16: return CUDNN_DATA_HALF;
    case DType::bf16: return CUDNN_DATA_BFLOAT16;
    default: break;  // f32; the vendor libraries see float tensors only
  }
  return CUDNN_DATA_FLOAT;
}

std::string status_text(cudnnStatus_t status) { return cudnnGetErrorString(status); }

// The descriptors of one convolution and the algorithm chosen for it.
struct ConvPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t relu = nullptr;
  cudnnConvolutionFwdAlgo_t algorithm{};
  std::size_t workspace = 0;
  cudnnMathType_t algorithm_math = CUDNN_DEFAULT_MATH;  // the chosen algorithm's, set on conv
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;  // what the caller allows: FMA only for f32 without tf32
  std::size_t search_workspace = 0;           // the most any heuristic candidate asked for, within the limit
  gpu::ConvArgs args;
  ConvSlots slots;     // of the bias and the residual among the node's inputs
  bool fused = false;  // bias + relu (+ residual) in cudnnConvolutionBiasActivationForward

  ConvPlan() = default;
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;
  ~ConvPlan() {
    (void)cudnnDestroyTensorDescriptor(x);
    (void)cudnnDestroyTensorDescriptor(y);
    (void)cudnnDestroyTensorDescriptor(bias);
    (void)cudnnDestroyFilterDescriptor(w);
    (void)cudnnDestroyConvolutionDescriptor(conv);
    (void)cudnnDestroyActivationDescriptor(relu);
  }
};

struct Planned {
  std::shared_ptr<ConvPlan> plan;
  std::string why_not;  // set when plan is null
};

Planned plan_conv(const Graph& graph, const Node& node, const CompileOptions& options, cudnnHandle_t handle) {
  const auto& p = std::get<Conv2dParams>(node.params);
  if (p.pad[0] != p.pad[2] || p.pad[1] != p.pad[3])
    return {nullptr, "cuDNN pads symmetrically, and these pads are " + std::to_string(p.pad[0]) + "," +
                         std::to_string(p.pad[1]) + "," + std::to_string(p.pad[2]) + "," + std::to_string(p.pad[3])};
  auto plan = std::make_shared<ConvPlan>();
  ConvPlan& c = *plan;
  c.args = gpu::conv_args(graph, node);
  c.args.allow_tf32 = options.allow_tf32;
  c.slots = conv_slots(node);
  const gpu::ConvArgs& a = c.args;
  for (const std::int64_t v : {a.n, a.c, a.h, a.w, a.k, a.r, a.s, a.p, a.q, a.n * a.c * a.h * a.w, a.n * a.k * a.p * a.q})
    if (v > std::numeric_limits<int>::max()) return {nullptr, "cuDNN takes 32-bit sizes, and this convolution is larger"};
  const auto i = [](std::int64_t v) { return static_cast<int>(v); };
  const cudnnDataType_t type = data_type(a.dtype);
  const bool strict_f32 = a.dtype == DType::f32 && !options.allow_tf32;
  c.math = strict_f32 ? CUDNN_FMA_MATH : a.dtype == DType::f32 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH;
  cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
  const auto ok = [&](cudnnStatus_t status) { return (s = status) == CUDNN_STATUS_SUCCESS; };
  const bool described =
      ok(cudnnCreateTensorDescriptor(&c.x)) && ok(cudnnCreateTensorDescriptor(&c.y)) &&
      ok(cudnnCreateTensorDescriptor(&c.bias)) && ok(cudnnCreateFilterDescriptor(&c.w)) &&
      ok(cudnnCreateConvolutionDescriptor(&c.conv)) && ok(cudnnCreateActivationDescriptor(&c.relu)) &&
      ok(cudnnSetTensor4dDescriptor(c.x, CUDNN_TENSOR_NCHW, type, i(a.n), i(a.c), i(a.h), i(a.w))) &&
      ok(cudnnSetFilter4dDescriptor(c.w, type, CUDNN_TENSOR_NCHW, i(a.k), i(a.c_per_group), i(a.r), i(a.s))) &&
      ok(cudnnSetConvolution2dDescriptor(c.conv, i(a.pad_top), i(a.pad_left), i(a.stride_h), i(a.stride_w),
                                         i(a.dilation_h), i(a.dilation_w), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)) &&
      ok(cudnnSetConvolutionGroupCount(c.conv, i(a.groups))) && ok(cudnnSetConvolutionMathType(c.conv, c.math)) &&
      ok(cudnnSetTensor4dDescriptor(c.y, CUDNN_TENSOR_NCHW, type, i(a.n), i(a.k), i(a.p), i(a.q))) &&
      ok(cudnnSetTensor4dDescriptor(c.bias, CUDNN_TENSOR_NCHW, type, 1, i(a.k), 1, 1)) &&
      ok(cudnnSetActivationDescriptor(c.relu, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));
  if (!described) return {nullptr, "cuDNN rejects this convolution's descriptors: " + status_text(s)};
  int dims[4] = {};
  if (!ok(cudnnGetConvolutionNdForwardOutputDim(c.conv, c.x, c.w, 4, dims)) || dims[0] != a.n || dims[1] != a.k ||
      dims[2] != a.p || dims[3] != a.q)
    return {nullptr, "cuDNN computes another output shape for this convolution"};

  int most = 0, count = 0;
  if (!ok(cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &most)))
    return {nullptr, "cuDNN's algorithm count failed: " + status_text(s)};
  std::vector<cudnnConvolutionFwdAlgoPerf_t> found(static_cast<std::size_t>(std::max(most, 1)));
  if (!ok(cudnnGetConvolutionForwardAlgorithm_v7(handle, c.x, c.w, c.conv, c.y, most, &count, found.data())))
    return {nullptr, "cuDNN's algorithm heuristics failed: " + status_text(s)};
  bool chosen = false;
  for (int k = 0; k < count; ++k) {
    const cudnnConvolutionFwdAlgoPerf_t& f = found[static_cast<std::size_t>(k)];
    if (f.status != CUDNN_STATUS_SUCCESS || f.memory > workspace_limit) continue;
    c.search_workspace = std::max(c.search_workspace, f.memory);
    if (chosen) continue;
    chosen = true;
    c.algorithm = f.algo;
    c.workspace = f.memory;
    // The heuristics may name tensor-op math; f32 without allow_tf32 stays on FMA math regardless.
    c.algorithm_math = strict_f32 ? c.math : f.mathType;
    if (!ok(cudnnSetConvolutionMathType(c.conv, c.algorithm_math)))
      return {nullptr, "cuDNN rejects its own math type: " + status_text(s)};
  }
  if (!chosen)
    return {nullptr, "cuDNN has no " + std::string(to_string(a.dtype)) + " forward algorithm for this convolution"};
  c.fused = a.dtype == DType::f32 && c.slots.bias >= 0 && a.activation == Activation::Relu;
  return {std::move(plan), {}};
}

// The fastest algorithm by cuDNN's timing of every candidate on scratch buffers (zeros) of c's
// sizes, on the program's stream; none when the buffers do not fit in device memory.
std::optional<ConvChoice> search(ConvPlan& c, const CudnnLibrary& libraries) {
  const gpu::ConvArgs& a = c.args;
  const DeviceContext& context = libraries.context();
  const std::string& spec = context.spec();
  const auto bytes = [&](std::int64_t count) {
    return static_cast<std::size_t>(std::max<std::int64_t>(count, 1)) * size_of(a.dtype);
  };
  const std::size_t x_bytes = bytes(a.n * a.c * a.h * a.w), w_bytes = bytes(a.k * a.c_per_group * a.r * a.s);
  DeviceMemory x, w, y, workspace;
  try {
    x = allocate_device_memory(context, x_bytes, "a convolution search's input");
    w = allocate_device_memory(context, w_bytes, "a convolution search's filters");
    y = allocate_device_memory(context, bytes(a.n * a.k * a.p * a.q), "a convolution search's output");
    if (c.search_workspace > 0)
      workspace = allocate_device_memory(context, c.search_workspace, "a convolution search's workspace");
  } catch (const Error& e) {
    if (e.code() != ErrorCode::OutOfMemory) throw;
    return std::nullopt;
  }
  cudaStream_t stream = nullptr;
  check_cudnn(cudnnGetStream(libraries.dnn(), &stream), spec, "cudnnGetStream");
  check(cudaMemsetAsync(x.get(), 0, x_bytes, stream), spec, "clearing a convolution search's input");
  check(cudaMemsetAsync(w.get(), 0, w_bytes, stream), spec, "clearing a convolution search's filters");
  check_cudnn(cudnnSetConvolutionMathType(c.conv, c.math), spec, "cudnnSetConvolutionMathType");
  int most = 0, count = 0;
  check_cudnn(cudnnGetConvolutionForwardAlgorithmMaxCount(libraries.dnn(), &most), spec,
              "cudnnGetConvolutionForwardAlgorithmMaxCount");
  std::vector<cudnnConvolutionFwdAlgoPerf_t> results(static_cast<std::size_t>(std::max(most, 1)));
  check_cudnn(cudnnFindConvolutionForwardAlgorithmEx(libraries.dnn(), c.x, x.get(), c.w, w.get(), c.conv, c.y, y.get(),
                                                     most, &count, results.data(), workspace.get(), c.search_workspace),
              spec, "cudnnFindConvolutionForwardAlgorithmEx");
  for (int k = 0; k < count; ++k) {  // fastest first
    const cudnnConvolutionFwdAlgoPerf_t& r = results[static_cast<std::size_t>(k)];
    if (r.status != CUDNN_STATUS_SUCCESS || r.memory > c.search_workspace) continue;
    if (c.math == CUDNN_FMA_MATH && r.mathType != CUDNN_FMA_MATH) continue;  // no tf32 unless allowed
    return ConvChoice{.algorithm = r.algo, .workspace = r.memory, .math = r.mathType};
  }
  return std::nullopt;
}

// Replaces the heuristics' algorithm with the measured one, from the device's choices or searched
// now and kept there; the heuristics' stays when the search does not fit in memory.
void choose_measured(ConvPlan& c, const CudnnLibrary& libraries) {
  const std::string key = gpu::conv_key(c.args);
  std::optional<ConvChoice> choice = libraries.conv_choices().find(key);
  if (!choice && (choice = search(c, libraries))) libraries.conv_choices().insert(key, *choice);
  if (choice) {
    c.algorithm = choice->algorithm;
    c.workspace = choice->workspace;
    c.algorithm_math = choice->math;
  }
  check_cudnn(cudnnSetConvolutionMathType(c.conv, c.algorithm_math), libraries.context().spec(),
              "cudnnSetConvolutionMathType");
}

NodeLaunch cudnn_conv2d_launch(const CompiledGraph& graph, const Node& node, CudnnLibrary& libraries) {
  Planned planned = plan_conv(graph.graph, node, libraries.options(), libraries.dnn());
  if (planned.plan == nullptr)
    throw Error(ErrorCode::Unsupported, libraries.context().spec() + ": Conv2d '" + node.name + "': " + planned.why_not);
  choose_measured(*planned.plan, libraries);
  libraries.reserve_workspace(planned.plan->workspace);
  const ConvPlan& c = *planned.plan;
  gpu::EpilogueArgs epilogue = gpu::conv_epilogue_args(c.args, c.slots.bias >= 0);
  const bool has_epilogue =
      !c.fused && (c.slots.bias >= 0 || c.slots.residual >= 0 || epilogue.activation != Activation::None);
  return [plan = std::move(planned.plan), &libraries, epilogue, has_epilogue, in = node.inputs, y = node.output](
             const Bindings& b, gpuStream_t stream) mutable {
    const ConvPlan& c = *plan;
    if (c.args.n * c.args.k * c.args.p * c.args.q == 0) return;
    const float one = 1.0f, zero = 0.0f;
    void* out = b(y);
    const void* residual = c.slots.residual >= 0 ? b(in[static_cast<std::size_t>(c.slots.residual)]) : nullptr;
    const std::string& spec = libraries.context().spec();
    if (c.fused) {
      // The residual is cuDNN's z, scaled by alpha2; without one, z is y scaled by 0.
      check_cudnn(cudnnConvolutionBiasActivationForward(
                      libraries.dnn(), &one, c.x, b(in[0]), c.w, b(in[1]), c.conv, c.algorithm,
                      libraries.workspace(), libraries.workspace_bytes(), residual != nullptr ? &one : &zero,
                      c.y, residual != nullptr ? residual : out, c.bias, b(in[static_cast<std::size_t>(c.slots.bias)]),
                      c.relu, c.y, out),
                  spec, "cudnnConvolutionBiasActivationForward");
      return;
    }
    check_cudnn(cudnnConvolutionForward(libraries.dnn(), &one, c.x, b(in[0]), c.w, b(in[1]), c.conv, c.algorithm,
                                        libraries.workspace(), libraries.workspace_bytes(), &zero, c.y, out),
                spec, "cudnnConvolutionForward");
    if (!has_epilogue) return;
    epilogue.addend = c.slots.bias >= 0 ? b(in[static_cast<std::size_t>(c.slots.bias)]) : nullptr;
    epilogue.residual = residual;
    epilogue.y = out;
    launch_epilogue(epilogue, libraries.context().limits(), stream);
  };
}

class CudnnSession final : public VendorSession {
 public:
  explicit CudnnSession(CudnnLibrary library) : library_(std::move(library)) {}
  NodeLaunch node_launch(const CompiledGraph& graph, const Node& node) override {
    return cudnn_conv2d_launch(graph, node, library_);
  }

 private:
  CudnnLibrary library_;
};

class CudnnProvider final : public VendorProvider {
 public:
  explicit CudnnProvider(std::shared_ptr<const DeviceContext> context) : context_(std::move(context)) {}

  std::string unsupported_reason(const Graph& graph, const Node& node, const CompileOptions& options) const override {
    const std::lock_guard lock(mutex_);
    try {
      if (query_ == nullptr) query_ = make_cudnn_handle(*context_);
    } catch (const Error& e) {
      return std::string("cuDNN does not start on this device: ") + e.what();
    }
    return plan_conv(graph, node, options, query_.get()).why_not;
  }

  std::unique_ptr<VendorSession> session(std::shared_ptr<const DeviceContext> context, gpuStream_t stream,
                                         const CompileOptions& options) const override {
    return std::make_unique<CudnnSession>(CudnnLibrary(std::move(context), stream, options, conv_choices_));
  }

 private:
  std::shared_ptr<const DeviceContext> context_;
  mutable std::mutex mutex_;
  mutable CudnnHandle query_;  // for the algorithm heuristics, made on first use
  std::shared_ptr<ConvChoices> conv_choices_ = std::make_shared<ConvChoices>();
};

}  // namespace

std::shared_ptr<const VendorProvider> make_cudnn_provider(std::shared_ptr<const DeviceContext> context) {
  return std::make_shared<CudnnProvider>(std::move(context));
}

}  // namespace porta::detail::gpu_cuda
