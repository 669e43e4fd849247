// Transpose: a gather through the permuted index map. Reshape and concat are plain copies that the
// runtime enqueues with gpuMemcpy*Async; they need no kernel.
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

// Elements move as bits, so the copy is exact for every dtype (NaN payloads included).
template <class Bits> __global__ void transpose_kernel(gpu::TransposeArgs args) {
  const auto* x = static_cast<const Bits*>(args.x_data);
  auto* y = static_cast<Bits*>(args.y);
  for (std::int64_t i = first_thread(); i < args.count; i += thread_count()) y[i] = x[map_index(args.x, i)];
}

}  // namespace

void launch_transpose(const gpu::TransposeArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch(args.count, limits);
  if (g.empty()) return;
  if (args.element_bytes == 4)
    gpu_launch(transpose_kernel<unsigned>, grid_of(g), block_of(g), stream, args);
  else
    gpu_launch(transpose_kernel<unsigned short>, grid_of(g), block_of(g), stream, args);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
