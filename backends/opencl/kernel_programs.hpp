#pragma once
// The device's OpenCL programs: one per kernel file (kernels/<stem>.cl, prefixed by common.cl)
// and storage dtype, built through the program cache, with per-device tile parameters.
#include <optional>
#include <string>
#include <string_view>

#include "backends/opencl/program_cache.hpp"
#include "porta/dtype.hpp"

namespace porta::detail {

// The GEMM's shape (kernels/matmul.cl). GPUs run `matmul`: TILE_M x TILE_N outputs per
// work-group, TILE_K-deep local-memory slices, WORK_M x WORK_N outputs per work-item. CPUs run
// `matmul_vector`: WORK_M rows x VW columns per work-item in float vectors, work-groups of
// group_x x group_y work-items, KC-deep slices packed in local memory.
struct GemmTiles {
  bool vector_kernel = false;
  int tile_m = 64, tile_n = 64, tile_k = 16, work_m = 4, work_n = 4;
  int vector_width = 4, group_x = 8, group_y = 8, kc = 64;
  std::size_t work_group() const { return static_cast<std::size_t>((tile_m / work_m) * (tile_n / work_n)); }
};

// Per device; env PORTA_OPENCL_GEMM=tiled or =vector forces a kernel (tests cover both on one device).
GemmTiles choose_gemm_tiles(const ClDeviceDescription& device);

class KernelPrograms {
 public:
  KernelPrograms(const ClDevice& device, std::optional<std::filesystem::path> cache_dir);
  ClProgram get(std::string_view stem, DType storage);  // throws NotFound for an unknown stem
  const GemmTiles& gemm_tiles() const noexcept { return tiles_; }
  ProgramCache& cache() noexcept { return cache_; }

  static std::string source(std::string_view stem);
  std::string options(std::string_view stem, DType storage) const;

 private:
  ProgramCache cache_;
  GemmTiles tiles_;
};

}  // namespace porta::detail
