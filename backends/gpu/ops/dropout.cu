// Dropout, one thread per four elements: the mask of backends/common/philox.h, which the host
// kernels share, so the GPU keeps the elements ref keeps, one Philox block serving four draws.
#include "backends/common/philox.h"
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

__global__ void dropout_kernel(gpu::DropoutArgs args) {
  const philox_u32 step = dropout_step(*static_cast<const float*>(args.step));
  const std::int64_t quads = (args.count + 3) / 4;
  for (std::int64_t q = first_thread(); q < quads; q += thread_count()) {
    const std::int64_t first = 4 * q, end = first + 4 < args.count ? first + 4 : args.count;
    DropoutCursor c;
    dropout_start(&c, args.seed, step, args.threshold, args.span, args.offset, static_cast<philox_u64>(first));
    for (std::int64_t i = first; i < end; ++i) {
      if (i > first) dropout_advance(&c);
      store(args.y, i, args.dtype, dropout_cursor_keeps(&c) != 0 ? load(args.x, i, args.dtype) * args.scale : 0.0f);
    }
  }
}

}  // namespace

void launch_dropout(const gpu::DropoutArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch((args.count + 3) / 4, limits);
  if (!g.empty()) gpu_launch(dropout_kernel, grid_of(g), block_of(g), stream, args);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
