#include "backends/gpu/plan/launch.hpp"

#include <algorithm>

#include "core/runtime/op_math.hpp"

namespace porta::detail::gpu {
namespace {

constexpr int elementwise_block = 256;
constexpr int blocks_per_compute_unit = 32;  // enough resident work to hide memory latency

// The tiles a GEMM may take, largest first (ties go to the earlier), with their efficiency relative
// to the largest: an estimate from their loads per flop (128x128 reads 1/64 of an element per
// flop, 64x128 1/43, 64x64 1/32), to be replaced by figures measured on the GPUs.
struct TileCandidate {
  GemmTile tile;
  double efficiency;
};
constexpr TileCandidate candidates[] = {{GemmTile::Large, 1.0},  {GemmTile::Wide, 0.85}, {GemmTile::Small, 0.7},
                                        {GemmTile::Matrix, 1.0}, {GemmTile::MatrixWide, 0.85}};

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

std::int64_t tile_shared_bytes(GemmTile tile, DType dtype) {
  const GemmTileShape s = tile_shape(tile);
  if (!is_matrix(tile)) return std::int64_t{8} * s.tile_k * (s.tile_m + 4 + s.tile_n);  // gemm_tile.cuh: 2 stages
  const std::int64_t operand = dtype == DType::f32 ? 4 : 2, warps = s.threads / 32;      // gemm_mma_tile.cuh
  return operand * (s.tile_m * (s.tile_k + 8) + s.tile_k * (s.tile_n + 8)) + 4 * warps * 16 * 20;
}

std::string tile_name(GemmTile tile) {
  const GemmTileShape s = tile_shape(tile);
  return std::string(is_matrix(tile) ? "mma" : "simt") + std::to_string(s.tile_m) + "x" + std::to_string(s.tile_n) +
         "x" + std::to_string(s.tile_k);
}

std::optional<GemmTile> parse_tile(std::string_view name) {
  for (const GemmTile t : gemm_tiles)
    if (tile_name(t) == name) return t;
  return std::nullopt;
}

GemmPlan plan_gemm(const GemmProblem& p, const DeviceLimits& limits, std::optional<GemmTile> forced) {
  constexpr std::int64_t mma_side = 16;
  const bool matrix_dtype = p.dtype != DType::f32 || (p.allow_tf32 && limits.tf32);
  const bool matrix = matrix_dtype && limits.matrix_units && std::min({p.m, p.n, p.k}) >= mma_side;
  // The SIMT tiles run every dtype exactly; the matrix tiles only where `matrix`.
  const auto fits = [&](GemmTile t) {
    return (matrix || !is_matrix(t)) && tile_shared_bytes(t, p.dtype) <= limits.shared_per_block;
  };
  const std::int64_t units = std::max(limits.compute_units, 1);
  const auto cost = [&](const TileCandidate& c) {
    const GemmTileShape s = tile_shape(c.tile);
    const std::int64_t blocks =
        ceil_div(p.m, s.tile_m) * ceil_div(p.n, s.tile_n) * std::max<std::int64_t>(p.batches, 1);
    return static_cast<double>(ceil_div(blocks, units) * s.tile_m * s.tile_n) / c.efficiency;
  };
  const auto best_of = [&](bool matrix_tiles) {
    const TileCandidate* best = nullptr;
    for (const TileCandidate& c : candidates)
      if (is_matrix(c.tile) == matrix_tiles && fits(c.tile) && (best == nullptr || cost(c) < cost(*best))) best = &c;
    return best;
  };
  const TileCandidate* best = matrix ? best_of(true) : nullptr;
  if (best == nullptr) best = best_of(false);
  GemmPlan plan;
  plan.tile = best != nullptr ? best->tile : GemmTile::Small;  // every device has the 17 KiB it takes
  if (forced && fits(*forced)) plan.tile = *forced;
  else if (forced) plan.note = "PORTA_GPU_TILE=" + tile_name(*forced) + " does not apply";
  plan.geometry = gemm_launch(plan.tile, p.m, p.n, p.batches, limits);
  return plan;
}

std::string describe(const GemmPlan& plan, const DeviceLimits& limits) {
  const LaunchGeometry& g = plan.geometry;
  const std::int64_t blocks = std::int64_t{g.grid[0]} * g.grid[1] * g.grid[2];
  return tile_name(plan.tile) + ", " + std::to_string(blocks) + " blocks on " + std::to_string(limits.compute_units) +
         " CUs" + (plan.note.empty() ? "" : " (" + plan.note + ")");
}

std::string describe(const GemmProblem& p) {
  return std::string(to_string(p.dtype)) + (p.allow_tf32 ? "+tf32" : "") + " m=" + std::to_string(p.m) +
         " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k) + " batches=" + std::to_string(p.batches);
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

bool thread_per_row(std::int64_t row_length) { return row_length <= 32; }

bool softmax_thread_per_row(const RowArgs& args) { return thread_per_row(args.axis); }

bool use_depthwise_conv(const ConvArgs& args) { return args.c_per_group == 1; }

GemmProblem conv_gemm_problem(const ConvArgs& a) {
  return {.dtype = a.dtype, .m = a.k_per_group, .n = a.n * a.p * a.q, .k = a.c_per_group * a.r * a.s,
          .batches = a.groups, .allow_tf32 = a.allow_tf32};
}

ConvPlan plan_conv(const ConvArgs& args, const DeviceLimits& limits, std::optional<GemmTile> forced) {
  if (!use_depthwise_conv(args))
    return {.depthwise = false, .gemm = plan_gemm(conv_gemm_problem(args), limits, forced)};
  ConvPlan plan{.depthwise = true, .gemm = {}};
  plan.gemm.geometry = elementwise_launch(args.n * args.k * args.p * args.q, limits);
  return plan;
}

std::string describe(const ConvPlan& plan, const DeviceLimits& limits) {
  return plan.depthwise ? "conv direct (depthwise)" : "conv implicit_gemm " + describe(plan.gemm, limits);
}

std::string conv_index_limit(const ConvArgs& a) {
  constexpr std::int64_t limit = std::int64_t{1} << 31;
  const std::int64_t x = a.n * a.c * a.h * a.w, y = a.n * a.k * a.p * a.q, w = a.k * a.c_per_group * a.r * a.s;
  if (x < limit && y < limit && w < limit) return {};
  return "the GPU conv kernels index in 32 bits: input, output and weights must each have fewer than 2^31 elements "
         "(here " + std::to_string(x) + ", " + std::to_string(y) + " and " + std::to_string(w) +
         "); split the batch";
}

}  // namespace porta::detail::gpu
