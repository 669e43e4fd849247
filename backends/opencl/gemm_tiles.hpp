#pragma once
// The GEMM's per-device parameters (kernels/matmul.cl, kernels/gemm_block.cl): chosen by device
// type, or measured by `porta-bench tune` (gemm_tuning.cpp) and stored per device next to the
// program cache, where every later process finds them.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/opencl/device_discovery.hpp"

namespace porta::detail {

struct GemmTiles {
  bool vector_kernel = false;
  // `matmul` (GPUs): TILE_M x TILE_N outputs per work-group, TILE_K-deep local-memory slices,
  // WORK_M x WORK_N outputs per work-item.
  int tile_m = 64, tile_n = 64, tile_k = 16, work_m = 4, work_n = 4;
  // `matmul_vector` (CPUs): one work-item per BLOCK_M x BLOCK_N block, KC-deep slices, a
  // micro-kernel of MR rows x NV float vectors of VW lanes.
  int vector_width = 16, vectors = 2, micro_m = 12, block_m = 96, block_n = 128, kc = 256;

  std::size_t work_group() const noexcept;   // work-items of one work-group of the chosen kernel
  std::uint64_t local_bytes() const noexcept;  // local memory of one work-group of the chosen kernel
  std::string build_options() const;         // the -D options of both kernels
  // "vector vw=16 nv=2 mr=12 bm=96 bn=128 kc=256" or "tiled tm=64 tn=64 tk=16 wm=4 wn=4": shown
  // by porta-bench tune and stored; parse() reads it back, nullopt when malformed.
  std::string to_string() const;
  static std::optional<GemmTiles> parse(std::string_view text);
  // Whether the kernel can be built with these on the device: divisibility, vector width,
  // work-group size and local memory.
  bool fits(const ClDeviceDescription& device) const noexcept;
};

GemmTiles default_gemm_tiles(const ClDeviceDescription& device);

// The tiles stored by `porta-bench tune` for this device in `cache_dir`, else the defaults. A
// missing, malformed or foreign file means the defaults, never an error. PORTA_OPENCL_GEMM=tiled
// or =vector forces a kernel (the tests run both on one device).
GemmTiles choose_gemm_tiles(const ClDeviceDescription& device, const std::optional<std::filesystem::path>& cache_dir);

// The device's tuning file in `cache_dir` (keyed by device name, driver and platform).
std::filesystem::path tuned_tiles_file(const std::filesystem::path& cache_dir, const ClDeviceDescription& device);
void store_tuned_tiles(const std::filesystem::path& file, const ClDeviceDescription& device,
                       const GemmTiles& tiles);  // throws IoError

// What porta-bench tune measures, in two rounds: micro-kernel shapes at the default block, then
// block sizes around the fastest shape. Only tiles that fit the device.
std::vector<GemmTiles> gemm_shape_candidates(const ClDeviceDescription& device);
std::vector<GemmTiles> gemm_block_candidates(const ClDeviceDescription& device, const GemmTiles& shape);

}  // namespace porta::detail
