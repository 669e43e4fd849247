#pragma once
// The neutral GPU API mapped to the CUDA runtime. Macros rather than functions because the same
// names also stand for enum values and types, and must cost nothing in device code.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "backends/gpu/plan/capabilities.hpp"

#define PORTA_GPU_NAMESPACE gpu_cuda
#define PORTA_GPU_BACKEND_NAME "cuda"
#define PORTA_GPU_VENDOR_NAME "NVIDIA"
#define PORTA_GPU_VENDOR_LIBRARIES "cuBLASLt/cuBLAS"  // of the vendor provider (impl=vendor)

#define gpuError_t cudaError_t
#define gpuSuccess cudaSuccess
#define gpuErrorMemoryAllocation cudaErrorMemoryAllocation
#define gpuErrorNoDevice cudaErrorNoDevice
#define gpuErrorInsufficientDriver cudaErrorInsufficientDriver
#define gpuGetErrorName cudaGetErrorName
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError

#define gpuDeviceProp_t cudaDeviceProp
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuSetDevice cudaSetDevice
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuRuntimeGetVersion cudaRuntimeGetVersion
#define gpuMemGetInfo cudaMemGetInfo

#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpy2DAsync cudaMemcpy2DAsync
#define gpuMemsetAsync cudaMemsetAsync
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice

#define gpuStream_t cudaStream_t
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize

#define gpuEvent_t cudaEvent_t
#define gpuEventCreate cudaEventCreate
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventElapsedTime cudaEventElapsedTime

#define gpuGraph_t cudaGraph_t
#define gpuGraphExec_t cudaGraphExec_t
#define gpuStreamBeginCapture cudaStreamBeginCapture
#define gpuStreamCaptureModeThreadLocal cudaStreamCaptureModeThreadLocal
#define gpuStreamEndCapture cudaStreamEndCapture
#define gpuGraphLaunch cudaGraphLaunch
#define gpuGraphDestroy cudaGraphDestroy
#define gpuGraphExecDestroy cudaGraphExecDestroy

// f16 storage bits <-> float; used by the kernels' loads and stores.
#define gpu_half_bits_to_float(bits) __half2float(__ushort_as_half(bits))
#define gpu_float_to_half_bits(value) __half_as_ushort(__float2half_rn(value))

// The signatures differ between the vendors (CUDA 12+ takes flags, HIP 5 an error log).
inline gpuError_t gpu_graph_instantiate(gpuGraphExec_t* exec, gpuGraph_t graph) {
  return cudaGraphInstantiate(exec, graph, 0);
}

inline porta::detail::gpu::Capabilities gpu_capabilities(const gpuDeviceProp_t& prop) {
  return porta::detail::gpu::nvidia_capabilities(prop.major, prop.minor);
}

// Whether the matrix-unit GEMM tile (gpu_mma_* below) runs on a device: it needs bf16 tensor cores,
// sm_80 or later.
inline bool gpu_runs_mma(const porta::detail::gpu::Capabilities& caps) { return caps.matrix_units && caps.bf16; }
// Whether it runs f32 as tf32 there (with CompileOptions::allow_tf32): sm_80 or later too.
inline bool gpu_runs_tf32(const porta::detail::gpu::Capabilities& caps) {
  return gpu_runs_mma(caps) && porta::detail::gpu::native_tf32(caps);
}

#if defined(__CUDACC__)
// The one triple-chevron launch, so that the CPU emulation of the tests can stand in for it.
template <class Args>
void gpu_launch(void (*kernel)(Args), dim3 grid, dim3 block, gpuStream_t stream, const Args& args) {
  kernel<<<grid, block, 0, stream>>>(args);
}
#endif

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <mma.h>

#include <type_traits>

#include "porta/dtype.hpp"

// Matrix units: one warp's 16x16xK multiply-accumulate into an f32 accumulator, of operands held in
// shared memory: f16 or bf16 storage bits (K = 16), or f32 values already rounded to tf32 (the
// f32 instantiation, K = 8). wmma, which nvcc lowers to mma.sync on sm_80 and sm_90 (bf16 and
// tf32 need sm_80, the oldest architecture this backend is built for). The warp of these
// instructions is 32 lanes by definition, whatever else the device reports.
#define PORTA_GPU_MMA_TF32 1
inline constexpr int gpu_mma_warp = 32;
template <porta::DType T> inline constexpr int gpu_mma_k = T == porta::DType::f32 ? 8 : 16;
template <porta::DType T>
using gpu_mma_element = std::conditional_t<T == porta::DType::f32, nvcuda::wmma::precision::tf32,
                                           std::conditional_t<T == porta::DType::f16, __half, __nv_bfloat16>>;
template <porta::DType T>  // what load_matrix_sync reads
using gpu_mma_memory = std::conditional_t<T == porta::DType::f32, float, gpu_mma_element<T>>;
template <porta::DType T>
using gpu_mma_a = nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, gpu_mma_k<T>, gpu_mma_element<T>,
                                         nvcuda::wmma::row_major>;
template <porta::DType T>
using gpu_mma_b = nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, gpu_mma_k<T>, gpu_mma_element<T>,
                                         nvcuda::wmma::row_major>;
template <porta::DType T>
using gpu_mma_accumulator = nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, gpu_mma_k<T>, float>;

template <porta::DType T> __device__ inline void gpu_mma_zero(gpu_mma_accumulator<T>& c) {
  nvcuda::wmma::fill_fragment(c, 0.0f);
}
// p: a row-major 16xK (A) or Kx16 (B) tile, 32-byte aligned, ld a multiple of 16 bytes.
template <porta::DType T, class S> __device__ inline void gpu_mma_load_a(gpu_mma_a<T>& a, const S* p, int ld) {
  nvcuda::wmma::load_matrix_sync(a, reinterpret_cast<const gpu_mma_memory<T>*>(p), ld);
}
template <porta::DType T, class S> __device__ inline void gpu_mma_load_b(gpu_mma_b<T>& b, const S* p, int ld) {
  nvcuda::wmma::load_matrix_sync(b, reinterpret_cast<const gpu_mma_memory<T>*>(p), ld);
}
template <porta::DType T>
__device__ inline void gpu_mma(gpu_mma_accumulator<T>& c, const gpu_mma_a<T>& a, const gpu_mma_b<T>& b) {
  nvcuda::wmma::mma_sync(c, a, b, c);
}
// p: a row-major 16x16 f32 tile, 32-byte aligned, ld a multiple of 4.
template <porta::DType T> __device__ inline void gpu_mma_store(float* p, int ld, const gpu_mma_accumulator<T>& c) {
  nvcuda::wmma::store_matrix_sync(p, c, ld, nvcuda::wmma::mem_row_major);
}
__device__ inline void gpu_sync_warp() { __syncwarp(); }
#endif
