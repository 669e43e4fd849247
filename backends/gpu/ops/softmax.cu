// Softmax along one axis over outer x inner rows of `axis` elements: a block per row, or a thread per
// row when rows are short (plan: softmax_thread_per_row).
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

__device__ std::int64_t first_of_row(const gpu::RowArgs& args, std::int64_t row) {
  return (row / args.inner) * args.axis * args.inner + row % args.inner;
}

__global__ void softmax_kernel(gpu::RowArgs args) {
  __shared__ float scratch[256];
  for (std::int64_t row = blockIdx.x; row < args.outer * args.inner; row += gridDim.x) {
    const std::int64_t first = first_of_row(args, row);
    const auto at = [&](std::int64_t a) { return first + a * args.inner; };
    // Subtracting the maximum keeps expf from overflowing; the result is unchanged.
    float max = -INFINITY;
    for (std::int64_t a = threadIdx.x; a < args.axis; a += blockDim.x) max = fmaxf(max, load(args.x, at(a), args.dtype));
    max = block_reduce(max, scratch, [](float a, float b) { return fmaxf(a, b); });
    float sum = 0.0f;
    for (std::int64_t a = threadIdx.x; a < args.axis; a += blockDim.x) sum += expf(load(args.x, at(a), args.dtype) - max);
    sum = block_reduce(sum, scratch, [](float a, float b) { return a + b; });
    for (std::int64_t a = threadIdx.x; a < args.axis; a += blockDim.x)
      store(args.y, at(a), args.dtype, expf(load(args.x, at(a), args.dtype) - max) / sum);
  }
}

__global__ void softmax_row_per_thread_kernel(gpu::RowArgs args) {
  for (std::int64_t row = first_thread(); row < args.outer * args.inner; row += thread_count()) {
    const std::int64_t first = first_of_row(args, row);
    float max = -INFINITY, sum = 0.0f;
    for (std::int64_t a = 0; a < args.axis; ++a) max = fmaxf(max, load(args.x, first + a * args.inner, args.dtype));
    for (std::int64_t a = 0; a < args.axis; ++a) sum += expf(load(args.x, first + a * args.inner, args.dtype) - max);
    for (std::int64_t a = 0; a < args.axis; ++a) {
      const std::int64_t i = first + a * args.inner;
      store(args.y, i, args.dtype, expf(load(args.x, i, args.dtype) - max) / sum);
    }
  }
}

}  // namespace

void launch_softmax(const gpu::RowArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  const std::int64_t rows = args.outer * args.inner;
  if (gpu::softmax_thread_per_row(args)) {
    const gpu::LaunchGeometry g = gpu::elementwise_launch(rows, limits);
    if (!g.empty()) gpu_launch(softmax_row_per_thread_kernel, grid_of(g), block_of(g), stream, args);
    return;
  }
  const gpu::LaunchGeometry g = gpu::row_launch(rows, args.axis, limits);
  if (!g.empty()) gpu_launch(softmax_kernel, grid_of(g), block_of(g), stream, args);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
