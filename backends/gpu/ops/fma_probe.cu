// The FMA probe (Device::measure_fma_gflops): every thread runs gpu::fma_probe_chains independent
// chains of acc = fmaf(acc, scale, shift) on registers, fmaf as the GEMM kernels multiply-add,
// chain i starting at i, and writes their sum, so that no step is optimized away.
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

__global__ void multiply_add_chains_kernel(gpu::FmaProbeArgs args) {
  float acc[gpu::fma_probe_chains];
#pragma unroll
  for (int i = 0; i < gpu::fma_probe_chains; ++i) acc[i] = static_cast<float>(i);
  // Unrolled by 4, so that the loop's own count and branch take few of the issue slots.
#pragma unroll 4
  for (std::int64_t step = 0; step < args.steps; ++step)
#pragma unroll
    for (int i = 0; i < gpu::fma_probe_chains; ++i) acc[i] = fmaf(acc[i], args.scale, args.shift);
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < gpu::fma_probe_chains; ++i) sum += acc[i];
  args.sums[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

}  // namespace

void launch_fma_probe(const gpu::FmaProbeArgs& args, gpuStream_t stream) {
  gpu_launch(multiply_add_chains_kernel, dim3(args.blocks), dim3(args.threads), stream, args);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
