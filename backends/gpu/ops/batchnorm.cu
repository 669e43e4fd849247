// Inference batchnorm over channel dimension 1: one thread per element.
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

__global__ void batchnorm_kernel(gpu::BatchNormArgs args) {
  for (std::int64_t i = first_thread(); i < args.count; i += thread_count()) {
    const std::int64_t c = (i / args.inner) % args.channels;
    const float stddev = sqrtf(load(args.var, c, args.dtype) + args.epsilon);
    const float x = load(args.x, i, args.dtype);
    const float y = load(args.scale, c, args.dtype) * (x - load(args.mean, c, args.dtype)) / stddev +
                    load(args.bias, c, args.dtype);
    store(args.y, i, args.dtype, y);
  }
}

}  // namespace

void launch_batchnorm(const gpu::BatchNormArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch(args.count, limits);
  if (!g.empty()) gpu_launch(batchnorm_kernel, grid_of(g), block_of(g), stream, args);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
