// The AVX2 depthwise kernel for pixel-major bands (depthwise_pixel_major_body), in a file of its
// own: added to vector_kernels_avx2.cpp, even as a function that nothing else called, a kernel
// like it changed how GCC compiled the other depthwise kernels there, and stride-1 layers that
// never ran it ran 5-25 % slower (docs/benchmarks.md, session 30).
#include "backends/cpu/kernels/vector_kernels.hpp"

namespace porta::detail {

__attribute__((target("avx2,fma"))) void avx2_depthwise_pixel_major(const DepthwiseRows& band, float* y) {
  depthwise_pixel_major_body<8>(band, y);
}

}  // namespace porta::detail
