#include "backends/opencl/kernel_programs.hpp"

#include <algorithm>
#include <cstdlib>
#include <span>

#include "core/runtime/embedded_source.hpp"
#include "porta/error.hpp"

namespace porta::detail {

std::span<const EmbeddedSource> opencl_kernel_sources();  // generated from kernels/*.cl

namespace {

std::string_view embedded(std::string_view stem) {
  for (const EmbeddedSource& s : opencl_kernel_sources())
    if (s.name == stem) return s.text;
  throw Error(ErrorCode::NotFound, "no OpenCL kernel source '" + std::string(stem) + ".cl' in this build");
}

}  // namespace

GemmTiles choose_gemm_tiles(const ClDeviceDescription& device) {
  GemmTiles t;
  const char* forced = std::getenv("PORTA_OPENCL_GEMM");
  const std::string_view kernel = forced == nullptr ? "" : forced;
  t.vector_kernel = kernel == "vector" || (kernel != "tiled" && device.is_cpu);
  if (t.vector_kernel) {
    // One float vector per row of a work-item's block; 8 rows keep a CPU's FMA units busy. The
    // group and slice depth were measured on PoCL (AVX-512): 64 x 128 blocks, 64-deep slices.
    t.vector_width = std::clamp(device.info.subgroup_size, 4, 16);
    t.work_m = 8;
    const auto pack_bytes = [&] {
      return static_cast<std::uint64_t>(t.group_y * t.work_m + t.group_x * t.vector_width) * t.kc * sizeof(float);
    };
    while (pack_bytes() > device.local_memory && t.kc > t.vector_width) t.kc /= 2;
    return t;
  }
  // A tile must fit the device's work-group and local-memory limits; halve it until it does.
  const auto local_bytes = [&] { return static_cast<std::uint64_t>((t.tile_m + t.tile_n) * t.tile_k) * sizeof(float); };
  while ((t.work_group() > device.max_work_group || local_bytes() > device.local_memory) && t.tile_m > t.work_m) {
    t.tile_m /= 2;
    t.tile_n /= 2;
  }
  return t;
}

KernelPrograms::KernelPrograms(const ClDevice& device, std::optional<std::filesystem::path> cache_dir)
    : cache_(device, std::move(cache_dir)), tiles_(choose_gemm_tiles(device.description)) {}

namespace {
// matmul.cl and conv2d.cl share the CPU GEMM block and its build options.
bool uses_gemm_block(std::string_view stem) { return stem == "matmul" || stem == "conv2d"; }
}  // namespace

std::string KernelPrograms::source(std::string_view stem) {
  std::string text = std::string(embedded("common")) + "\n";
  if (uses_gemm_block(stem)) text += std::string(embedded("gemm_block")) + "\n";
  return text + std::string(embedded(stem));
}

std::string KernelPrograms::options(std::string_view stem, DType storage) const {
  static constexpr std::string_view storage_macro[] = {"-DSTORAGE_F32", "-DSTORAGE_F16", "-DSTORAGE_BF16"};
  // No fast-math flags: results must stay within a few ulps of the reference.
  std::string options = "-cl-std=CL1.2 " + std::string(storage_macro[static_cast<std::size_t>(storage)]);
  if (uses_gemm_block(stem))
    options += " -DTILE_M=" + std::to_string(tiles_.tile_m) + " -DTILE_N=" + std::to_string(tiles_.tile_n) +
               " -DTILE_K=" + std::to_string(tiles_.tile_k) + " -DWORK_M=" + std::to_string(tiles_.work_m) +
               " -DWORK_N=" + std::to_string(tiles_.work_n) + " -DVW=" + std::to_string(tiles_.vector_width) +
               " -DGROUP_X=" + std::to_string(tiles_.group_x) + " -DGROUP_Y=" + std::to_string(tiles_.group_y) +
               " -DKC=" + std::to_string(tiles_.kc);
  return options;
}

ClProgram KernelPrograms::get(std::string_view stem, DType storage) {
  return cache_.get(source(stem), options(stem, storage));
}

}  // namespace porta::detail
