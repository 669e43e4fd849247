// The AVX2 depthwise kernel for pixel-major bands (depthwise_pixel_major_body), in a file of its
// own: added to vector_kernels_avx2.cpp, even as a function that nothing else called, a kernel
// like it changed how GCC compiled the other depthwise kernels there, and stride-1 layers that
// never ran it ran 5-25 % slower (docs/benchmarks.md, session 30). A 3x3 band of exactly two
// chunks (32 channels) runs them unrolled: as a loop of chunks, 32-channel layers ran 10-25 %
// slower.
#include <immintrin.h>

#include "backends/cpu/kernels/vector_kernels.hpp"

namespace porta::detail {
namespace {

template <int S, int Chunks, bool Stream>
[[gnu::noinline]] __attribute__((target("avx2,fma"))) void pixel_major(const DepthwiseRows& band, float* y) {
  depthwise_pixel_major_body<8, S, Chunks, Stream>(band, y);
}

template <bool Stream> void pixel_major_any(const DepthwiseRows& band, float* y) {
  if (band.taps_w == 5) {
    pixel_major<5, 0, Stream>(band, y);
  } else if (band.c_end - band.c_begin == 2 * depthwise_pixel_major_channels<8>) {
    pixel_major<3, 2, Stream>(band, y);
  } else {
    pixel_major<3, 0, Stream>(band, y);
  }
}

}  // namespace

void avx2_depthwise_pixel_major(const DepthwiseRows& band, float* y) {
  if (!band.stream) return pixel_major_any<false>(band, y);
  pixel_major_any<true>(band, y);
  _mm_sfence();  // the non-temporal stores, ordered before whatever reads y next, on any thread
}

}  // namespace porta::detail
