#pragma once
// The neutral GPU API mapped to the CUDA runtime. Macros rather than functions because the same
// names also stand for enum values and types, and must cost nothing in device code.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "backends/gpu/plan/capabilities.hpp"

#define PORTA_GPU_NAMESPACE gpu_cuda
#define PORTA_GPU_BACKEND_NAME "cuda"
#define PORTA_GPU_VENDOR_NAME "NVIDIA"

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

#if defined(__CUDACC__)
// The one triple-chevron launch, so that the CPU emulation of the tests can stand in for it.
template <class Args>
void gpu_launch(void (*kernel)(Args), dim3 grid, dim3 block, gpuStream_t stream, const Args& args) {
  kernel<<<grid, block, 0, stream>>>(args);
}
#endif
