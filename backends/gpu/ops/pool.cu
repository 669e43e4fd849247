// Max and average pooling (one thread per output) and global average pooling (one block per plane).
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

__global__ void pool_kernel(gpu::PoolArgs args) {
  const std::int64_t count = args.planes * args.p * args.q;
  for (std::int64_t i = first_thread(); i < count; i += thread_count()) {
    const std::int64_t ow = i % args.q, oh = (i / args.q) % args.p, plane = i / (args.p * args.q);
    const std::int64_t h0 = oh * args.stride[0] - args.pad[0], w0 = ow * args.stride[1] - args.pad[1];
    const std::int64_t base = plane * args.h * args.w;
    // A max window that covers no input element (odd ceil_mode cases) yields -inf, as in PyTorch.
    float best = -INFINITY, sum = 0.0f;
    std::int64_t inside = 0, padded = 0;  // ceil_mode windows can overhang the padding too
    for (std::int64_t a = 0; a < args.kernel[0]; ++a) {
      const std::int64_t h = h0 + a * args.dilation[0];
      for (std::int64_t b = 0; b < args.kernel[1]; ++b) {
        const std::int64_t w = w0 + b * args.dilation[1];
        if (h >= -args.pad[0] && h < args.h + args.pad[2] && w >= -args.pad[1] && w < args.w + args.pad[3]) ++padded;
        if (h < 0 || h >= args.h || w < 0 || w >= args.w) continue;
        const float x = load(args.x, base + h * args.w + w, args.dtype);
        best = fmaxf(best, x);
        sum += x;
        ++inside;
      }
    }
    const std::int64_t divisor = args.count_include_pad ? padded : inside;
    const float y = args.max ? best : (divisor == 0 ? 0.0f : sum / static_cast<float>(divisor));
    store(args.y, i, args.dtype, y);
  }
}

__global__ void global_avg_pool_kernel(gpu::RowArgs args) {
  __shared__ float scratch[256];
  for (std::int64_t plane = blockIdx.x; plane < args.outer; plane += gridDim.x) {
    float sum = 0.0f;
    for (std::int64_t i = threadIdx.x; i < args.axis; i += blockDim.x) sum += load(args.x, plane * args.axis + i, args.dtype);
    sum = block_reduce(sum, scratch, [](float a, float b) { return a + b; });
    if (threadIdx.x == 0) store(args.y, plane, args.dtype, sum / static_cast<float>(args.axis));
  }
}

}  // namespace

void launch_pool(const gpu::PoolArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch(args.planes * args.p * args.q, limits);
  if (!g.empty()) gpu_launch(pool_kernel, grid_of(g), block_of(g), stream, args);
}

void launch_global_avg_pool(const gpu::RowArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::row_launch(args.outer, args.axis, limits);
  if (!g.empty()) gpu_launch(global_avg_pool_kernel, grid_of(g), block_of(g), stream, args);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
