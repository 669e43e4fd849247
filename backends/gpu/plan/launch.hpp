#pragma once
// Launch geometry and tile choice of the GPU kernels: host logic, tested on the CPU.
#include <cstdint>

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
// tile_m x tile_n output tile with tile_k-deep shared-memory stages. Large and Small are SIMT
// tiles (every dtype); Matrix runs f16/bf16 on matrix units (tensor cores), 16x16x16 steps
// per warp, and f32 as tf32 (16x16x8 steps), always with f32 accumulation.
enum class GemmTile : std::uint8_t { Large, Small, Matrix };
struct GemmTileShape {
  int tile_m, tile_n, tile_k, threads;
};
constexpr GemmTileShape tile_shape(GemmTile tile) {
  switch (tile) {
    case GemmTile::Large: return {128, 128, 8, 256};
    case GemmTile::Small: return {64, 64, 16, 256};
    case GemmTile::Matrix: break;
  }
  return {128, 128, 32, 256};
}

// f16 and bf16 take the matrix-unit tile where the device has it and every side of the product
// fills at least one 16x16x16 step; so does f32, as tf32, but only when the caller allows tf32
// (CompileOptions::allow_tf32, in the kernel arguments) and the device runs it. Everything else
// takes the SIMT tiles, exact f32 arithmetic. Large SIMT tiles need fewer loads per flop but leave
// SMs idle on small problems: take the small tile when the large one would not give every compute
// unit a block.
GemmTile choose_gemm_tile(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batches,
                          const DeviceLimits& limits, bool allow_tf32 = false);

// Tiles over x (columns) and y (rows), batches (or conv groups) over z; the kernel strides over
// whatever the grid's limits leave uncovered.
LaunchGeometry gemm_launch(GemmTile tile, std::int64_t m, std::int64_t n, std::int64_t batches,
                           const DeviceLimits& limits);

// Softmax gives each row a thread of its own when rows are short: a block per row would leave most
// of its threads idle and spend its time in reductions.
bool softmax_thread_per_row(const RowArgs& args);

// Conv2d takes the direct (depthwise) kernel when each output reads one input channel: every
// output is then an R x S dot product and an implicit GEMM would be mostly padding.
bool use_depthwise_conv(const ConvArgs& args);

}  // namespace porta::detail::gpu
