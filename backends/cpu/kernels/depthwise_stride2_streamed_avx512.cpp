// The AVX-512 depthwise kernel for bands of stride 2 that stream (DepthwiseFinish::streamed), chunk by
// chunk as depthwise_rows_stride2, in a file of its own for the reason depthwise_pixel_major.inc
// gives. AVX-512's alone: its vectors are whole cache lines, so every store past the caches writes
// a whole line; AVX2's chunks would write half lines, a pass apart.
#include <immintrin.h>

#include "backends/cpu/kernels/vector_kernels.hpp"

namespace porta::detail {

__attribute__((target("avx512f,fma"))) void avx512_depthwise_rows_stride2_streamed(const DepthwiseRows& band,
                                                                                 float* y) {
  depthwise_rows_body<16, 2, DepthwiseFinish::streamed>(band, y);
  _mm_sfence();  // the non-temporal stores, ordered before whatever reads y next, on any thread
}

}  // namespace porta::detail
