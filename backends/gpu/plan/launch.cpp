#include "backends/gpu/plan/launch.hpp"

#include <algorithm>

#include "core/runtime/op_math.hpp"

namespace porta::detail::gpu {
namespace {

constexpr int elementwise_block = 256;
constexpr int blocks_per_compute_unit = 32;  // enough resident work to hide memory latency

unsigned clamp_grid(std::int64_t blocks, std::int64_t limit) {
  return static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 0, limit));
}

}  // namespace

LaunchGeometry elementwise_launch(std::int64_t count, const DeviceLimits& limits) {
  LaunchGeometry g;
  const int block = std::min(elementwise_block, limits.max_threads_per_block);
  const std::int64_t wanted = ceil_div(count, block);
  const std::int64_t enough = std::int64_t{limits.compute_units} * blocks_per_compute_unit;
  g.grid[0] = clamp_grid(std::min(wanted, std::max<std::int64_t>(enough, 1)), limits.max_grid[0]);
  g.block[0] = static_cast<unsigned>(block);
  return g;
}

LaunchGeometry row_launch(std::int64_t rows, std::int64_t row_length, const DeviceLimits& limits) {
  LaunchGeometry g;
  const int warp = std::max(1, limits.warp_size);
  const int most = std::max(warp, std::min(256, limits.max_threads_per_block) / warp * warp);
  const auto threads = std::clamp<std::int64_t>(ceil_div(row_length, warp) * warp, warp, most);
  g.block[0] = static_cast<unsigned>(threads);
  g.grid[0] = clamp_grid(rows, limits.max_grid[0]);
  return g;
}

GemmTile choose_gemm_tile(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batches,
                          const DeviceLimits& limits, bool allow_tf32) {
  constexpr std::int64_t mma_side = 16;
  const bool matrix_dtype = dtype != DType::f32 || (allow_tf32 && limits.tf32);
  if (matrix_dtype && limits.matrix_units && std::min({m, n, k}) >= mma_side) return GemmTile::Matrix;
  const GemmTileShape large = tile_shape(GemmTile::Large);
  const std::int64_t blocks = ceil_div(m, large.tile_m) * ceil_div(n, large.tile_n) * std::max<std::int64_t>(batches, 1);
  return blocks >= limits.compute_units ? GemmTile::Large : GemmTile::Small;
}

LaunchGeometry gemm_launch(GemmTile tile, std::int64_t m, std::int64_t n, std::int64_t batches,
                           const DeviceLimits& limits) {
  const GemmTileShape shape = tile_shape(tile);
  LaunchGeometry g;
  g.grid[0] = clamp_grid(ceil_div(n, shape.tile_n), limits.max_grid[0]);
  g.grid[1] = clamp_grid(ceil_div(m, shape.tile_m), limits.max_grid[1]);
  g.grid[2] = clamp_grid(batches, limits.max_grid[2]);
  g.block[0] = static_cast<unsigned>(shape.threads);
  return g;
}

bool softmax_thread_per_row(const RowArgs& args) { return args.axis <= 32; }

bool use_depthwise_conv(const ConvArgs& args) { return args.c_per_group == 1; }

}  // namespace porta::detail::gpu
