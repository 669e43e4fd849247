// Conv2d through cuDNN's convolution API on porta's NCHW buffers. The algorithm comes from cuDNN's
// heuristics (cudnnGetConvolutionForwardAlgorithm_v7, as frameworks do without benchmarking),
// chosen when the program is prepared; its workspace is the program's. Bias + ReLU in f32 (with
// the residual, if any) fuse into cudnnConvolutionBiasActivationForward; any other bias, residual
// or activation runs in porta's epilogue kernel after the convolution.
#include <algorithm>
#include <limits>
#include <variant>
#include <vector>

#include "backends/cuda/vendor/cuda_vendor.hpp"
#include "backends/gpu/ops/ops.hpp"
#include "backends/gpu/plan/op_args.hpp"
#include "core/runtime/op_math.hpp"
#include "porta/error.hpp"

namespace porta::detail::gpu_cuda {
namespace {

// The most workspace a convolution algorithm may ask for.
constexpr std::size_t workspace_limit = std::size_t{512} << 20;

cudnnDataType_t data_type(DType t) {
  switch (t) {
    case DType::f16: return CUDNN_DATA_HALF;
    case DType::bf16: return CUDNN_DATA_BFLOAT16;
    case DType::f32: break;
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
  c.slots = conv_slots(node);
  const gpu::ConvArgs& a = c.args;
  for (const std::int64_t v : {a.n, a.c, a.h, a.w, a.k, a.r, a.s, a.p, a.q, a.n * a.c * a.h * a.w, a.n * a.k * a.p * a.q})
    if (v > std::numeric_limits<int>::max()) return {nullptr, "cuDNN takes 32-bit sizes, and this convolution is larger"};
  const auto i = [](std::int64_t v) { return static_cast<int>(v); };
  const cudnnDataType_t type = data_type(a.dtype);
  const bool strict_f32 = a.dtype == DType::f32 && !options.allow_tf32;
  const cudnnMathType_t math =
      strict_f32 ? CUDNN_FMA_MATH : a.dtype == DType::f32 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH;
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
      ok(cudnnSetConvolutionGroupCount(c.conv, i(a.groups))) && ok(cudnnSetConvolutionMathType(c.conv, math)) &&
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
  for (int k = 0; k < count; ++k) {
    const cudnnConvolutionFwdAlgoPerf_t& f = found[static_cast<std::size_t>(k)];
    if (f.status != CUDNN_STATUS_SUCCESS || f.memory > workspace_limit) continue;
    c.algorithm = f.algo;
    c.workspace = f.memory;
    // The heuristics may name tensor-op math; f32 without allow_tf32 stays on FMA math regardless.
    if (!strict_f32 && !ok(cudnnSetConvolutionMathType(c.conv, f.mathType)))
      return {nullptr, "cuDNN rejects its own math type: " + status_text(s)};
    c.fused = a.dtype == DType::f32 && c.slots.bias >= 0 && a.activation == Activation::Relu;
    return {std::move(plan), {}};
  }
  return {nullptr, "cuDNN has no " + std::string(to_string(a.dtype)) + " forward algorithm for this convolution"};
}

}  // namespace

std::string cudnn_unsupported_reason(const Graph& graph, const Node& node, const CompileOptions& options,
                                     cudnnHandle_t query) {
  return plan_conv(graph, node, options, query).why_not;
}

NodeLaunch cudnn_conv2d_launch(const CompiledGraph& graph, const Node& node, CudaLibraries& libraries) {
  Planned planned = plan_conv(graph.graph, node, libraries.options(), libraries.dnn());
  if (planned.plan == nullptr)
    throw Error(ErrorCode::Unsupported, libraries.context().spec() + ": Conv2d '" + node.name + "': " + planned.why_not);
  libraries.reserve_dnn_workspace(planned.plan->workspace);
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
                      libraries.dnn_workspace(), libraries.dnn_workspace_bytes(), residual != nullptr ? &one : &zero,
                      c.y, residual != nullptr ? residual : out, c.bias, b(in[static_cast<std::size_t>(c.slots.bias)]),
                      c.relu, c.y, out),
                  spec, "cudnnConvolutionBiasActivationForward");
      return;
    }
    check_cudnn(cudnnConvolutionForward(libraries.dnn(), &one, c.x, b(in[0]), c.w, b(in[1]), c.conv, c.algorithm,
                                        libraries.dnn_workspace(), libraries.dnn_workspace_bytes(), &zero, c.y, out),
                spec, "cudnnConvolutionForward");
    if (!has_epilogue) return;
    epilogue.addend = c.slots.bias >= 0 ? b(in[static_cast<std::size_t>(c.slots.bias)]) : nullptr;
    epilogue.residual = residual;
    epilogue.y = out;
    launch_epilogue(epilogue, libraries.context().limits(), stream);
  };
}

}  // namespace porta::detail::gpu_cuda
