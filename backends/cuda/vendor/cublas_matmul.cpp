// MatMul and Gemm through cuBLAS, where cuBLASLt (cublaslt_matmul.cpp) does not run them: one
// strided-batched GemmEx call (or one call per batch when broadcast batch dims are not evenly
// strided) on porta's row-major buffers as column-major operands (plan/blas_call.hpp). f16 and bf16 accumulate in f32; f32 uses tf32 tensor cores only
// with CompileOptions::allow_tf32. alpha goes to cuBLAS; beta * C (broadcast) and the activation
// to porta's epilogue kernel.
#include "backends/cuda/vendor/cuda_vendor.hpp"
#include "backends/gpu/ops/ops.hpp"
#include "backends/gpu/plan/blas_call.hpp"
#include "backends/gpu/plan/op_args.hpp"

namespace porta::detail::gpu_cuda {

cudaDataType cuda_data_type(DType t) {
  switch (t) {
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    default: break;  // f32; the vendor libraries see float tensors only
  }
  return CUDA_R_32F;
}

cublasComputeType_t cublas_compute_type(DType t, bool allow_tf32) {
  return t == DType::f32 && allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

cublasOperation_t cublas_operation(const gpu::BlasOperand& operand) {
  return operand.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
}

std::string cublas_unsupported_reason(const Graph& graph, const Node& node) {
  if (!gpu::fits_int32(gpu::blas_gemm(gpu::gemm_args(graph, node))))
    return "cuBLAS takes 32-bit sizes and leading dimensions, and this product is larger";
  return {};
}

NodeLaunch cublas_gemm_launch(const CompiledGraph& graph, const Node& node, CudaLibraries& libraries) {
  const gpu::GemmArgs args = gpu::gemm_args(graph.graph, node);
  const gpu::BlasGemm call = gpu::blas_gemm(args);
  const bool has_epilogue = args.has_c || args.activation != Activation::None;
  const cudaDataType type = cuda_data_type(args.dtype);
  const cublasComputeType_t compute = cublas_compute_type(args.dtype, libraries.options().allow_tf32);
  const auto element = static_cast<std::int64_t>(size_of(args.dtype));
  return [=, &libraries, epilogue = gpu::gemm_epilogue_args(args), in = node.inputs, y = node.output](
             const Bindings& b, gpuStream_t stream) mutable {
    if (call.m == 0 || call.n == 0 || call.batch_count == 0) return;
    const float alpha = args.alpha, beta = 0.0f;
    // Y^T = op(B)^T op(A)^T: porta's B is cuBLAS's first operand.
    const std::byte* first = b(in[1]);
    const std::byte* second = b(in[0]);
    std::byte* out = b(y);
    const std::string& spec = libraries.context().spec();
    const auto m = static_cast<int>(call.m), n = static_cast<int>(call.n), k = static_cast<int>(call.k);
    const cublasOperation_t first_op = cublas_operation(call.first), second_op = cublas_operation(call.second);
    if (call.uniform_batches) {
      check_cublas(cublasGemmStridedBatchedEx(libraries.blas(), first_op, second_op, m, n, k, &alpha, first, type,
                                              static_cast<int>(call.first.ld), call.stride_first, second, type,
                                              static_cast<int>(call.second.ld), call.stride_second, &beta, out, type,
                                              static_cast<int>(call.ld_y), call.stride_y,
                                              static_cast<int>(call.batch_count), compute, CUBLAS_GEMM_DEFAULT),
                   spec, "cublasGemmStridedBatchedEx");
    } else {
      for (std::int64_t batch = 0; batch < call.batch_count; ++batch) {
        const gpu::BatchOffsets o = gpu::batch_offsets(args, batch);
        check_cublas(cublasGemmEx(libraries.blas(), first_op, second_op, m, n, k, &alpha, first + o.b * element, type,
                                  static_cast<int>(call.first.ld), second + o.a * element, type,
                                  static_cast<int>(call.second.ld), &beta, out + batch * call.stride_y * element, type,
                                  static_cast<int>(call.ld_y), compute, CUBLAS_GEMM_DEFAULT),
                     spec, "cublasGemmEx");
      }
    }
    if (!has_epilogue) return;
    epilogue.addend = args.has_c ? b(in[2]) : nullptr;
    epilogue.y = out;
    launch_epilogue(epilogue, libraries.context().limits(), stream);
  };
}

}  // namespace porta::detail::gpu_cuda
