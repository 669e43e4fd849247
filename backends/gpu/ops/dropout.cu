// Dropout, one thread per element: the mask of backends/common/philox.h, which the host kernels
// share, so the GPU keeps the elements ref keeps.
#include "backends/common/philox.h"
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

__global__ void dropout_kernel(gpu::DropoutArgs args) {
  const philox_u32 step = dropout_step(*static_cast<const float*>(args.step));
  for (std::int64_t i = first_thread(); i < args.count; i += thread_count()) {
    const bool keep = dropout_keeps(args.seed, step, static_cast<philox_u64>(i), args.threshold) != 0;
    store(args.y, i, args.dtype, keep ? load(args.x, i, args.dtype) * args.scale : 0.0f);
  }
}

}  // namespace

void launch_dropout(const gpu::DropoutArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch(args.count, limits);
  if (!g.empty()) gpu_launch(dropout_kernel, grid_of(g), block_of(g), stream, args);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
