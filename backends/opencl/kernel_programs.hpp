#pragma once
// The device's OpenCL programs: one per kernel file (kernels/<stem>.cl, prefixed by common.cl)
// and storage dtype, built through the program cache, with per-device tile parameters.
#include <optional>
#include <string>
#include <string_view>

#include "backends/opencl/gemm_tiles.hpp"
#include "backends/opencl/program_cache.hpp"
#include "porta/dtype.hpp"

namespace porta::detail {

class KernelPrograms {
 public:
  // The GEMM tiles are the device's (choose_gemm_tiles) unless given.
  KernelPrograms(const ClDevice& device, std::optional<std::filesystem::path> cache_dir,
                 std::optional<GemmTiles> tiles = std::nullopt);
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
