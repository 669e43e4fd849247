#pragma once
// A kernel source file compiled into the library (see cmake/EmbedKernels.cmake).
#include <span>
#include <string_view>

namespace porta::detail {

struct EmbeddedSource {
  std::string_view name;  // the file's stem, e.g. "matmul" for kernels/matmul.cl
  std::string_view text;
};

}  // namespace porta::detail
