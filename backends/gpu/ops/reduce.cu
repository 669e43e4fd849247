// Reductions over any set of axes: a block per output element, its threads folding every
// blockDim-th reduced element in f32, then a block reduction.
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

__device__ float fold(Reduction op, float a, float b) {
  switch (op) {
    case Reduction::Max: return fmaxf(a, b);
    case Reduction::Min: return fminf(a, b);
    default: return a + b;
  }
}

__global__ void reduce_kernel(gpu::ReduceArgs args) {
  __shared__ float scratch[256];
  const float start = args.op == Reduction::Max ? -INFINITY : args.op == Reduction::Min ? INFINITY : 0.0f;
  for (std::int64_t o = blockIdx.x; o < args.outputs; o += gridDim.x) {
    const std::int64_t base = map_index(args.kept, o);
    float acc = start;
    for (std::int64_t r = threadIdx.x; r < args.count; r += blockDim.x)
      acc = fold(args.op, acc, load(args.x, base + map_index(args.reduced, r), args.dtype));
    acc = block_reduce(acc, scratch, [op = args.op](float a, float b) { return fold(op, a, b); });
    if (threadIdx.x == 0)
      store(args.y, o, args.dtype, args.op == Reduction::Mean ? acc / static_cast<float>(args.count) : acc);
  }
}

}  // namespace

void launch_reduce(const gpu::ReduceArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::row_launch(args.outputs, args.count, limits);
  if (!g.empty()) gpu_launch(reduce_kernel, grid_of(g), block_of(g), stream, args);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
