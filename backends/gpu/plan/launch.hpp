#pragma once
// Launch geometry and tile choice of the GPU kernels: host logic, tested on the CPU.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "backends/gpu/plan/kernel_args.hpp"

namespace porta::detail::gpu {

// What the launch planning needs to know about a device (from its properties at run time).
struct DeviceLimits {
  int compute_units = 1;  // SMs / CUs
  int warp_size = 32;     // 32 on NVIDIA, 64 on AMD CDNA, 32 on RDNA: always read from the device
  int max_threads_per_block = 1024;
  std::int64_t max_grid[3] = {2147483647, 65535, 65535};
  bool matrix_units = false;  // porta's matrix-unit GEMM kernels are compiled in and the device runs them
  bool tf32 = false;          // ... and run f32 operands as tf32 there (NVIDIA sm_80+; none on AMD yet)
  std::int64_t shared_per_block = 48 * 1024;  // static shared memory a block may use
};

struct LaunchGeometry {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  bool empty() const noexcept { return grid[0] == 0 || grid[1] == 0 || grid[2] == 0; }
};

// One thread per element in grid-stride loops: enough blocks to fill the device several times
// over, and never more than the grid allows (kernels stride over the rest).
LaunchGeometry elementwise_launch(std::int64_t count, const DeviceLimits& limits);

// One block per row (global pooling, softmax), rows laid on x then y; blocks stride over the rest.
// The block is a multiple of the warp size, sized to the row.
LaunchGeometry row_launch(std::int64_t rows, std::int64_t row_length, const DeviceLimits& limits);

// The GEMM tiles the kernels are compiled for. Each is a 256-thread block computing a
// tile_m x tile_n output tile with tile_k-deep shared-memory stages. Large, Wide and Small are
// SIMT tiles (every dtype); Matrix and MatrixWide run f16/bf16 on matrix units (tensor cores),
// 16x16x16 steps per warp, and f32 as tf32 (16x16x8 steps), always with f32 accumulation. The
// Wide tiles have 64 rows: a convolution's rows are its filters, 64 in many layers.
enum class GemmTile : std::uint8_t { Large, Small, Matrix, Wide, MatrixWide };
struct GemmTileShape {
  int tile_m, tile_n, tile_k, threads;
};
constexpr GemmTileShape tile_shape(GemmTile tile) {
  switch (tile) {
    case GemmTile::Large: return {128, 128, 8, 256};
    case GemmTile::Small: return {64, 64, 16, 256};
    case GemmTile::Wide: return {64, 128, 16, 256};
    case GemmTile::MatrixWide: return {64, 128, 32, 256};
    case GemmTile::Matrix: break;
  }
  return {128, 128, 32, 256};
}
inline constexpr GemmTile gemm_tiles[] = {GemmTile::Large, GemmTile::Wide, GemmTile::Small, GemmTile::Matrix,
                                         GemmTile::MatrixWide};
constexpr bool is_matrix(GemmTile tile) { return tile == GemmTile::Matrix || tile == GemmTile::MatrixWide; }

// The static shared memory of a tile's kernel for operands of `dtype`, as gemm_tile.cuh and
// gemm_mma_tile.cuh declare it (for the matrix tiles, with NVIDIA's 32-lane warps: AMD's take less).
std::int64_t tile_shared_bytes(GemmTile tile, DType dtype);

// "simt128x128x8", "mma64x128x32": the names of PORTA_GPU_TILE and of the plans.
std::string tile_name(GemmTile tile);
std::optional<GemmTile> parse_tile(std::string_view name);

// A GEMM (or a convolution's implicit GEMM) to plan: batches of m x n x k products.
struct GemmProblem {
  DType dtype = DType::f32;
  std::int64_t m = 0, n = 0, k = 0, batches = 1;
  bool allow_tf32 = false;
};

// The tile and launch a GEMM runs with, chosen at prepare; `note` says why a forced tile was refused.
struct GemmPlan {
  GemmTile tile = GemmTile::Large;
  LaunchGeometry geometry;
  std::string note;
};

// f16 and bf16 take a matrix-unit tile where the device has it and every side of the product fills
// at least one 16x16x16 step; so does f32, as tf32, but only when the caller allows tf32
// (CompileOptions::allow_tf32) and the device runs it. Everything else takes the SIMT tiles, exact
// f32 arithmetic. Among those, the one with the least estimated time: the blocks the busiest
// compute unit runs, times each block's padded tile, over the tile's relative efficiency (larger
// tiles load less per flop). So a problem that gives the large tile fewer blocks than compute units
// takes a smaller one. `forced` (PORTA_GPU_TILE) replaces the choice where it applies, else the
// plan's note says why not.
GemmPlan plan_gemm(const GemmProblem& problem, const DeviceLimits& limits, std::optional<GemmTile> forced = {});

// "gemm simt64x128x16, 784 blocks on 132 CUs", for Executable::node_plans and PORTA_VERBOSE.
std::string describe(const GemmPlan& plan, const DeviceLimits& limits);
std::string describe(const GemmProblem& problem);

// Tiles over x (columns) and y (rows), batches (or conv groups) over z; the kernel strides over
// whatever the grid's limits leave uncovered.
LaunchGeometry gemm_launch(GemmTile tile, std::int64_t m, std::int64_t n, std::int64_t batches,
                           const DeviceLimits& limits);

// Softmax (and the cross-entropy gradient, a softmax with a class taken off) gives each row a thread
// of its own when rows are short: a block per row would leave most of its threads idle and spend
// its time in reductions.
bool thread_per_row(std::int64_t row_length);
bool softmax_thread_per_row(const RowArgs& args);

// Conv2d takes the direct (depthwise) kernel when each output reads one input channel: every
// output is then an R x S dot product and an implicit GEMM would be mostly padding.
bool use_depthwise_conv(const ConvArgs& args);

// A convolution's plan: the direct kernel's launch, or the implicit GEMM's (rows: a group's
// filters, K/groups; columns: the batch's output pixels, N*P*Q; depth: C/groups*R*S; batches: the
// groups), planned as any GEMM.
struct ConvPlan {
  bool depthwise = false;
  GemmPlan gemm;  // the geometry of either kernel
};
GemmProblem conv_gemm_problem(const ConvArgs& args);
ConvPlan plan_conv(const ConvArgs& args, const DeviceLimits& limits, std::optional<GemmTile> forced = {});
std::string describe(const ConvPlan& plan, const DeviceLimits& limits);

// Why the conv kernels cannot run `args` (empty when they can): they index in 32 bits, so the
// input, the output and the weights must each have fewer than 2^31 elements.
std::string conv_index_limit(const ConvArgs& args);

}  // namespace porta::detail::gpu
