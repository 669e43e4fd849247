// The AVX2 depthwise kernel for a band of two chunks of channels (depthwise_chunk_pair_body), in
// a file of its own: added to vector_kernels_avx2.cpp, even as a function that nothing else
// called, it changed how GCC compiled the other depthwise kernels there, and stride-1 layers that
// never ran it ran 5-25 % slower (docs/benchmarks.md, session 30).
#include "backends/cpu/kernels/vector_kernels.hpp"

namespace porta::detail {

__attribute__((target("avx2,fma"))) void avx2_depthwise_chunk_pair(const DepthwiseRows& band, float* y) {
  depthwise_chunk_pair_body<8>(band, y);
}

}  // namespace porta::detail
