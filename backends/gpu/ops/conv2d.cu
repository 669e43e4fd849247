// Conv2d: an implicit GEMM per group (filters x output pixels, reduced over C/groups*R*S) that
// gathers its im2col operand on the fly and fuses bias, residual and activation into the store; and a direct
// kernel for depthwise convolution, where each output reads a single input channel.
#include "backends/gpu/ops/gemm_tile.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

template <DType T, gpu::GemmTile Tile>
__global__ void __launch_bounds__(gemm_threads) conv2d_kernel(gpu::ConvArgs a) {
  constexpr gpu::GemmTileShape shape = gpu::tile_shape(Tile);
  const std::int64_t rs = a.r * a.s, pq = a.p * a.q;
  const std::int64_t m = a.k_per_group, n = a.n * pq, k = a.c_per_group * rs;
  for (std::int64_t group = blockIdx.z; group < a.groups; group += gridDim.z) {
    const std::int64_t first_filter = group * a.k_per_group, first_channel = group * a.c_per_group;
    const auto load_w = [&](std::int64_t i, std::int64_t l) { return load<T>(a.weights, (first_filter + i) * k + l); };
    const auto load_x = [&](std::int64_t l, std::int64_t j) {
      const std::int64_t c = l / rs, r = (l % rs) / a.s, s = l % a.s;
      const std::int64_t image = j / pq, oh = (j % pq) / a.q, ow = j % a.q;
      const std::int64_t h = oh * a.stride_h - a.pad_top + r * a.dilation_h;
      const std::int64_t w = ow * a.stride_w - a.pad_left + s * a.dilation_w;
      if (h < 0 || h >= a.h || w < 0 || w >= a.w) return 0.0f;  // zero padding
      return load<T>(a.x, ((image * a.c + first_channel + c) * a.h + h) * a.w + w);
    };
    const auto store_y = [&](std::int64_t i, std::int64_t j, float acc) {
      const std::int64_t filter = first_filter + i, image = j / pq;
      const std::int64_t index = (image * a.k + filter) * pq + j % pq;
      if (a.bias != nullptr) acc += load<T>(a.bias, filter);
      if (a.residual != nullptr) acc += load<T>(a.residual, index);
      store<T>(a.y, index, activate(a.activation, acc));
    };
    for (std::int64_t row0 = std::int64_t{blockIdx.y} * shape.tile_m; row0 < m; row0 += std::int64_t{gridDim.y} * shape.tile_m)
      for (std::int64_t col0 = std::int64_t{blockIdx.x} * shape.tile_n; col0 < n; col0 += std::int64_t{gridDim.x} * shape.tile_n)
        gemm_block_tile<T, Tile>(m, n, k, row0, col0, true, true, load_w, load_x, store_y);
  }
}

template <DType T> __global__ void depthwise_conv2d_kernel(gpu::ConvArgs a) {
  const std::int64_t count = a.n * a.k * a.p * a.q;
  for (std::int64_t i = first_thread(); i < count; i += thread_count()) {
    const std::int64_t ow = i % a.q, oh = (i / a.q) % a.p, filter = (i / (a.p * a.q)) % a.k, image = i / (a.k * a.p * a.q);
    const std::int64_t channel = filter / a.k_per_group;  // one input channel per group
    const std::int64_t x_plane = (image * a.c + channel) * a.h * a.w;
    float sum = a.bias != nullptr ? load<T>(a.bias, filter) : 0.0f;
    for (std::int64_t r = 0; r < a.r; ++r) {
      const std::int64_t h = oh * a.stride_h - a.pad_top + r * a.dilation_h;
      if (h < 0 || h >= a.h) continue;
      for (std::int64_t s = 0; s < a.s; ++s) {
        const std::int64_t w = ow * a.stride_w - a.pad_left + s * a.dilation_w;
        if (w < 0 || w >= a.w) continue;
        sum = fmaf(load<T>(a.x, x_plane + h * a.w + w), load<T>(a.weights, (filter * a.r + r) * a.s + s), sum);
      }
    }
    if (a.residual != nullptr) sum += load<T>(a.residual, i);
    store<T>(a.y, i, activate(a.activation, sum));
  }
}

}  // namespace

void launch_conv2d(const gpu::ConvArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  if (gpu::use_depthwise_conv(args)) {
    const gpu::LaunchGeometry g = gpu::elementwise_launch(args.n * args.k * args.p * args.q, limits);
    if (g.empty()) return;
    with_dtype(args.dtype, [&](auto t) {
      gpu_launch(depthwise_conv2d_kernel<decltype(t)::value>, grid_of(g), block_of(g), stream, args);
    });
    return;
  }
  const std::int64_t m = args.k_per_group, n = args.n * args.p * args.q;
  const std::int64_t k = args.c_per_group * args.r * args.s;
  const gpu::GemmTile tile = gpu::choose_gemm_tile(args.dtype, m, n, k, args.groups, limits, args.allow_tf32);
  const gpu::LaunchGeometry g = gpu::gemm_launch(tile, m, n, args.groups, limits);
  if (g.empty()) return;
  with_dtype(args.dtype, [&](auto t) {
    with_tile<decltype(t)::value>(tile, [&](auto c) {
      gpu_launch(conv2d_kernel<decltype(t)::value, decltype(c)::value>, grid_of(g), block_of(g), stream, args);
    });
  });
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
