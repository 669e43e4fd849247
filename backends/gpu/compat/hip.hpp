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

#if defined(__HIPCC__)
// The one triple-chevron launch, so that the CPU emulation of the tests can stand in for it.
template <class Args>
void gpu_launch(void (*kernel)(Args), dim3 grid, dim3 block, gpuStream_t stream, const Args& args) {
  kernel<<<grid, block, 0, stream>>>(args);
}
#endif
