#pragma once
// The neutral GPU API mapped to HIP (Debian's HIP 5.2 and later ROCm). Macros rather than functions
// because the same names also stand for enum values and types, and must cost nothing in device code.
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__  // Debian's HIP targets AMD only; the host files are built by g++
#endif
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#include "backends/gpu/plan/capabilities.hpp"

#define PORTA_GPU_NAMESPACE gpu_hip
#define PORTA_GPU_BACKEND_NAME "hip"
#define PORTA_GPU_VENDOR_NAME "AMD"
#define PORTA_GPU_VENDOR_LIBRARIES "rocBLAS/MIOpen"  // of the vendor provider (impl=vendor)

#define gpuError_t hipError_t
#define gpuSuccess hipSuccess
#define gpuErrorMemoryAllocation hipErrorOutOfMemory
#define gpuErrorNoDevice hipErrorNoDevice
#define gpuErrorInsufficientDriver hipErrorInsufficientDriver
#define gpuGetErrorName hipGetErrorName
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError

#define gpuDeviceProp_t hipDeviceProp_t
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuSetDevice hipSetDevice
#define gpuDriverGetVersion hipDriverGetVersion
#define gpuRuntimeGetVersion hipRuntimeGetVersion
#define gpuMemGetInfo hipMemGetInfo

#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpy2DAsync hipMemcpy2DAsync
#define gpuMemsetAsync hipMemsetAsync
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice

#define gpuStream_t hipStream_t
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize

#define gpuEvent_t hipEvent_t
#define gpuEventCreate hipEventCreate
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventElapsedTime hipEventElapsedTime

#define gpuGraph_t hipGraph_t
#define gpuGraphExec_t hipGraphExec_t
#define gpuStreamBeginCapture hipStreamBeginCapture
#define gpuStreamCaptureModeThreadLocal hipStreamCaptureModeThreadLocal
#define gpuStreamEndCapture hipStreamEndCapture
#define gpuGraphLaunch hipGraphLaunch
#define gpuGraphDestroy hipGraphDestroy
#define gpuGraphExecDestroy hipGraphExecDestroy

#define gpu_half_bits_to_float(bits) __half2float(__ushort_as_half(bits))
#define gpu_float_to_half_bits(value) __half_as_ushort(__float2half_rn(value))

inline gpuError_t gpu_graph_instantiate(gpuGraphExec_t* exec, gpuGraph_t graph) {
  return hipGraphInstantiate(exec, graph, nullptr, nullptr, 0);
}

inline porta::detail::gpu::Capabilities gpu_capabilities(const gpuDeviceProp_t& prop) {
  return porta::detail::gpu::amd_capabilities(prop.gcnArchName);
}

// Whether the matrix-unit GEMM tile (gpu_mma_* below) runs on a device: MFMA with bf16, CDNA 2
// (gfx90a) and CDNA 3 (gfx94x), wave64.
inline bool gpu_runs_mma(const porta::detail::gpu::Capabilities& caps) {
  return caps.arch == "gfx90a" || caps.arch.starts_with("gfx94");
}
// Never, so far: porta's MFMA path has no xf32 (gfx90a and gfx1030 have none, and gfx94x's is
// unused), so f32 runs on the SIMT tiles even with allow_tf32 and the device reports no tf32.
inline bool gpu_runs_tf32(const porta::detail::gpu::Capabilities& caps) {
  return porta::detail::gpu::native_tf32(caps);
}

#if defined(__HIPCC__)
// The one triple-chevron launch, so that the CPU emulation of the tests can stand in for it.
template <class Args>
void gpu_launch(void (*kernel)(Args), dim3 grid, dim3 block, gpuStream_t stream, const Args& args) {
  kernel<<<grid, block, 0, stream>>>(args);
}
#endif

#if defined(__HIPCC__)
#include <type_traits>

#include "porta/dtype.hpp"

// Matrix units: CDNA's MFMA, one wavefront's 16x16x16 multiply-accumulate of f16 or bf16 operands
// held in shared memory as storage bits, into an f32 accumulator (v_mfma_f32_16x16x16f16 and
// v_mfma_f32_16x16x16bf16_1k, whose builtins hipcc 5.2 has for gfx90a and gfx940), with the
// gpu_mma_* names of compat/cuda.hpp. Each of the 64 lanes holds 4 elements of each 16x16 tile, by
// AMD's register layout of these instructions: lane l holds A(l % 16, 4 (l / 16) + e),
// B(4 (l / 16) + e, l % 16) and D(4 (l / 16) + e, l % 16) for e = 0..3. The kernels are compiled for
// every architecture of the build; only those with MFMA run them (gpu_runs_mma), the others trap.
#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define PORTA_GPU_MFMA 1
#endif
inline constexpr int gpu_mma_warp = 64;
template <porta::DType T> inline constexpr int gpu_mma_k = 16;
typedef _Float16 gpu_half4 __attribute__((ext_vector_type(4)));
typedef short gpu_short4 __attribute__((ext_vector_type(4)));
typedef float gpu_float4 __attribute__((ext_vector_type(4)));
template <porta::DType T> struct gpu_mma_a {
  std::conditional_t<T == porta::DType::f16, gpu_half4, gpu_short4> v;
};
template <porta::DType T> using gpu_mma_b = gpu_mma_a<T>;
template <porta::DType T> struct gpu_mma_accumulator {
  gpu_float4 v;
};

__device__ inline int gpu_mma_lane() { return static_cast<int>(threadIdx.x) % gpu_mma_warp; }
template <porta::DType T> __device__ inline auto gpu_mma_element(unsigned short bits) {
  if constexpr (T == porta::DType::f16) return __builtin_bit_cast(_Float16, bits);
  else return static_cast<short>(bits);
}
template <porta::DType T> __device__ inline void gpu_mma_zero(gpu_mma_accumulator<T>& c) {
  c.v = gpu_float4{0.0f, 0.0f, 0.0f, 0.0f};
}
template <porta::DType T> __device__ inline void gpu_mma_load_a(gpu_mma_a<T>& a, const unsigned short* p, int ld) {
  const int row = gpu_mma_lane() % 16, k0 = gpu_mma_lane() / 16 * 4;
  for (int e = 0; e < 4; ++e) a.v[e] = gpu_mma_element<T>(p[row * ld + k0 + e]);
}
template <porta::DType T> __device__ inline void gpu_mma_load_b(gpu_mma_b<T>& b, const unsigned short* p, int ld) {
  const int col = gpu_mma_lane() % 16, k0 = gpu_mma_lane() / 16 * 4;
  for (int e = 0; e < 4; ++e) b.v[e] = gpu_mma_element<T>(p[(k0 + e) * ld + col]);
}
template <porta::DType T>
__device__ inline void gpu_mma(gpu_mma_accumulator<T>& c, const gpu_mma_a<T>& a, const gpu_mma_b<T>& b) {
#if defined(PORTA_GPU_MFMA)
  if constexpr (T == porta::DType::f16) c.v = __builtin_amdgcn_mfma_f32_16x16x16f16(a.v, b.v, c.v, 0, 0, 0);
  else c.v = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a.v, b.v, c.v, 0, 0, 0);
#else
  (void)c, (void)a, (void)b;
  __builtin_trap();  // an architecture without MFMA: plan never chooses this tile there
#endif
}
template <porta::DType T>
__device__ inline void gpu_mma_store(float* p, int ld, const gpu_mma_accumulator<T>& c) {
  const int col = gpu_mma_lane() % 16, r0 = gpu_mma_lane() / 16 * 4;
  for (int e = 0; e < 4; ++e) p[(r0 + e) * ld + col] = c.v[e];
}
// A block barrier stands in for a wavefront one: the kernels reach it uniformly.
__device__ inline void gpu_sync_warp() { __syncthreads(); }
#endif
