#include "backends/opencl/kernel_programs.hpp"

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

KernelPrograms::KernelPrograms(const ClDevice& device, std::optional<std::filesystem::path> cache_dir,
                               std::optional<GemmTiles> tiles)
    : cache_(device, cache_dir), tiles_(tiles ? *tiles : choose_gemm_tiles(device.description, cache_dir)) {}

namespace {
// matmul.cl and conv2d.cl share the CPU GEMM block and its build options.
bool uses_gemm_block(std::string_view stem) { return stem == "matmul" || stem == "conv2d"; }
}  // namespace

std::string KernelPrograms::source(std::string_view stem) {
  std::string text = std::string(embedded("common")) + "\n";
  if (uses_gemm_block(stem)) text += std::string(embedded("gemm_block")) + "\n";
  if (stem == "attention") text += std::string(embedded("online_softmax")) + "\n";  // shared with attention.cu
  if (stem == "dropout") text += std::string(embedded("philox")) + "\n";  // shared with the host and dropout.cu
  if (stem == "backward") text += std::string(embedded("backward_math")) + "\n";  // shared with C++ and CUDA
  return text + std::string(embedded(stem));
}

std::string KernelPrograms::options(std::string_view stem, DType storage) const {
  static constexpr std::string_view storage_macro[] = {"-DSTORAGE_F32", "-DSTORAGE_F16", "-DSTORAGE_BF16",
                                                       "-DSTORAGE_I64", "-DSTORAGE_I32", "-DSTORAGE_BOOL"};
  // No fast-math flags: results must stay within a few ulps of the reference.
  std::string options = "-cl-std=CL1.2 " + std::string(storage_macro[static_cast<std::size_t>(storage)]);
  if (uses_gemm_block(stem)) options += tiles_.build_options();
  return options;
}

ClProgram KernelPrograms::get(std::string_view stem, DType storage) {
  return cache_.get(source(stem), options(stem, storage));
}

}  // namespace porta::detail
