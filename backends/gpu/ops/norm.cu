// Layer and RMS normalisation: a block per row, in f32, in two passes (the mean, then the spread
// about it), each a block reduction. The mean is taken of x - x[0] and x[0] added back: a row of equal values
// then has a mean of exactly that value and normalises to exactly 0, not to a rounding magnified by
// 1/sqrt(epsilon).
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

__global__ void norm_kernel(gpu::NormArgs args) {
  __shared__ float scratch[256];
  const auto sum = [](float a, float b) { return a + b; };
  const float n = static_cast<float>(args.n);
  for (std::int64_t row = blockIdx.x; row < args.rows; row += gridDim.x) {
    const std::int64_t first = row * args.n;
    float mean = 0.0f;
    if (!args.rms) {
      const float shift = load(args.x, first, args.dtype);
      for (std::int64_t i = threadIdx.x; i < args.n; i += blockDim.x) {
        mean += load(args.x, first + i, args.dtype) - shift;
      }
      mean = shift + block_reduce(mean, scratch, sum) / n;
    }
    float spread = 0.0f;
    for (std::int64_t i = threadIdx.x; i < args.n; i += blockDim.x) {
      const float d = load(args.x, first + i, args.dtype) - mean;
      spread += d * d;
    }
    const float inv = 1.0f / sqrtf(block_reduce(spread, scratch, sum) / n + args.epsilon);
    for (std::int64_t i = threadIdx.x; i < args.n; i += blockDim.x) {
      float v = (load(args.x, first + i, args.dtype) - mean) * inv * load(args.scale, i, args.dtype);
      if (args.bias != nullptr) v += load(args.bias, i, args.dtype);
      store(args.y, first + i, args.dtype, v);
    }
  }
}

}  // namespace

void launch_norm(const gpu::NormArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::row_launch(args.rows, args.n, limits);
  if (!g.empty()) gpu_launch(norm_kernel, grid_of(g), block_of(g), stream, args);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
