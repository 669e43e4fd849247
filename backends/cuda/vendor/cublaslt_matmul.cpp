// MatMul and Gemm through cuBLASLt: one cublasLtMatmul per run on porta's row-major buffers as
// column-major operands (plan/blas_call.hpp), its algorithm chosen when the program is prepared
// (cublasLtMatmulAlgoGetHeuristic, within the workspace the libraries hold on the device), with
// as much of Gemm's epilogue fused as cuBLASLt has (gpu::blas_epilogue): C as its bias vector or
// its beta * C, then ReLU. The rest runs in porta's epilogue kernel after the call. f32 uses tf32
// only with CompileOptions::allow_tf32. What cuBLASLt is not given (batches not evenly strided,
// empty products) or has no algorithm for stays with cuBLAS (cublas_matmul.cpp).
#include "backends/cuda/vendor/cuda_vendor.hpp"
#include "backends/gpu/ops/ops.hpp"
#include "backends/gpu/plan/blas_call.hpp"
#include "backends/gpu/plan/op_args.hpp"

namespace porta::detail::gpu_cuda {
namespace {

// porta's GPU tensors start at offsets of DeviceImpl::alignment() (256) in 256-aligned buffers.
constexpr std::int64_t tensor_alignment = 256;

// The descriptors of one product and the algorithm chosen for it.
struct LtPlan {
  cublasLtMatmulDesc_t matmul = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, y = nullptr;  // y is C's too
  cublasLtMatmulAlgo_t algorithm{};
  std::size_t workspace = 0;

  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() {
    (void)cublasLtMatmulDescDestroy(matmul);
    for (cublasLtMatrixLayout_t layout : {first, second, y}) (void)cublasLtMatrixLayoutDestroy(layout);
  }
};

struct DestroyPreference {
  void operator()(cublasLtMatmulPreference_t p) const noexcept { (void)cublasLtMatmulPreferenceDestroy(p); }
};

// `batches` of the stored matrix `m`, `stride` elements apart.
bool make_layout(cublasLtMatrixLayout_t* layout, cudaDataType type, const gpu::BlasLayout& m, std::int64_t batches,
                 std::int64_t stride) {
  if (cublasLtMatrixLayoutCreate(layout, type, static_cast<std::uint64_t>(m.rows), static_cast<std::uint64_t>(m.cols),
                                 m.ld) != CUBLAS_STATUS_SUCCESS)
    return false;
  if (batches == 1) return true;
  const auto count = static_cast<std::int32_t>(batches);
  return cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count) ==
             CUBLAS_STATUS_SUCCESS &&
         cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                          sizeof stride) == CUBLAS_STATUS_SUCCESS;
}

template <class T> bool set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, T value) {
  return cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof value) == CUBLAS_STATUS_SUCCESS;
}
template <class T> bool set(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attribute, T value) {
  return cublasLtMatmulPreferenceSetAttribute(p, attribute, &value, sizeof value) == CUBLAS_STATUS_SUCCESS;
}

// The descriptors and cuBLASLt's best algorithm for `call`, or nullptr when it has none.
std::shared_ptr<LtPlan> plan_matmul(const gpu::GemmArgs& args, const gpu::BlasGemm& call, const gpu::BlasEpilogue& fused,
                                    CudaLibraries& libraries) {
  auto plan = std::make_shared<LtPlan>();
  LtPlan& p = *plan;
  const cudaDataType type = cuda_data_type(args.dtype);
  const cublasLtEpilogue_t epilogue = fused.bias ? (fused.relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                                 : (fused.relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
  const bool described =
      cublasLtMatmulDescCreate(&p.matmul, cublas_compute_type(args.dtype, libraries.options().allow_tf32),
                               CUDA_R_32F) == CUBLAS_STATUS_SUCCESS &&
      set<std::int32_t>(p.matmul, CUBLASLT_MATMUL_DESC_TRANSA, cublas_operation(call.first)) &&
      set<std::int32_t>(p.matmul, CUBLASLT_MATMUL_DESC_TRANSB, cublas_operation(call.second)) &&
      set<std::uint32_t>(p.matmul, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue) &&
      (!fused.bias || set<std::int32_t>(p.matmul, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, type)) &&
      make_layout(&p.first, type, gpu::first_layout(call), call.batch_count, call.stride_first) &&
      make_layout(&p.second, type, gpu::second_layout(call), call.batch_count, call.stride_second) &&
      make_layout(&p.y, type, gpu::result_layout(call), call.batch_count, call.stride_y);
  if (!described) return nullptr;

  cublasLtMatmulPreference_t raw = nullptr;
  if (cublasLtMatmulPreferenceCreate(&raw) != CUBLAS_STATUS_SUCCESS) return nullptr;
  const std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>, DestroyPreference> preference(raw);
  const auto element = static_cast<std::int64_t>(size_of(args.dtype));
  const auto alignment = static_cast<std::uint32_t>(gpu::blas_alignment(call, element, tensor_alignment));
  if (!set<std::uint64_t>(raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, libraries.blas_workspace_bytes())) return nullptr;
  for (const auto attribute : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                               CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (!set<std::uint32_t>(raw, attribute, alignment)) return nullptr;
  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  if (cublasLtMatmulAlgoGetHeuristic(libraries.lt(), p.matmul, p.first, p.second, p.y, p.y, raw, 1, &best, &found) !=
          CUBLAS_STATUS_SUCCESS ||
      found == 0 || best.state != CUBLAS_STATUS_SUCCESS)
    return nullptr;
  p.algorithm = best.algo;
  p.workspace = best.workspaceSize;
  return plan;
}

}  // namespace

NodeLaunch cublaslt_gemm_launch(const CompiledGraph& graph, const Node& node, CudaLibraries& libraries) {
  const gpu::GemmArgs args = gpu::gemm_args(graph.graph, node);
  const gpu::BlasGemm call = gpu::blas_gemm(args);
  if (!call.uniform_batches || call.m == 0 || call.n == 0 || call.k == 0 || call.batch_count == 0) return {};
  const gpu::BlasEpilogue fused = gpu::blas_epilogue(args);
  std::shared_ptr<LtPlan> plan = plan_matmul(args, call, fused, libraries);
  if (plan == nullptr) return {};
  gpu::EpilogueArgs epilogue = gpu::gemm_epilogue_args(args);
  epilogue.activation = fused.porta_activation;
  const float alpha = args.alpha, beta = fused.c_matrix ? args.beta : 0.0f;
  return [plan = std::move(plan), &libraries, fused, epilogue, alpha, beta, in = node.inputs, y = node.output](
             const Bindings& b, gpuStream_t stream) mutable {
    const LtPlan& p = *plan;
    const std::string& spec = libraries.context().spec();
    std::byte* out = b(y);
    const void* c = fused.c_matrix ? b(in[2]) : out;  // C is dense [M, N] like Y, or unread (beta 0)
    if (fused.bias) {
      const void* bias = b(in[2]);
      check_cublas(cublasLtMatmulDescSetAttribute(p.matmul, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias), spec,
                   "setting cuBLASLt's bias");
    }
    // Y^T = op(B)^T op(A)^T: porta's B is cuBLASLt's first operand.
    check_cublas(cublasLtMatmul(libraries.lt(), p.matmul, &alpha, b(in[1]), p.first, b(in[0]), p.second, &beta, c, p.y,
                                out, p.y, &p.algorithm, libraries.blas_workspace(), p.workspace, stream),
                 spec, "cublasLtMatmul");
    if (!fused.porta_epilogue()) return;
    epilogue.addend = fused.porta_addend ? b(in[2]) : nullptr;
    epilogue.y = out;
    launch_epilogue(epilogue, libraries.context().limits(), stream);
  };
}

}  // namespace porta::detail::gpu_cuda
