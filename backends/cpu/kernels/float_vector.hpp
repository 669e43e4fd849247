#pragma once
// W floats as one vector value, for the bodies compiled per instruction set with that set's own
// register width (vector_kernels.inc: a 64-byte vector under AVX2 lives on the stack).
// Specialised because GCC 12 drops vector_size on a type that depends on a template parameter.
#include <immintrin.h>

namespace porta::detail {

template <int W> struct FloatVector;
template <> struct FloatVector<4> { using type = float __attribute__((vector_size(16))); };
template <> struct FloatVector<8> { using type = float __attribute__((vector_size(32))); };
template <> struct FloatVector<16> { using type = float __attribute__((vector_size(64))); };

// W floats from and to memory, through references: passing a vector by value would change the
// ABI between the instruction sets these bodies are compiled for (-Wpsabi), though they are
// always inlined.
template <int W> [[gnu::always_inline]] inline void load_vector(typename FloatVector<W>::type& v, const float* p) {
  __builtin_memcpy(&v, p, sizeof v);
}
template <int W> [[gnu::always_inline]] inline void store_vector(float* p, const typename FloatVector<W>::type& v) {
  __builtin_memcpy(p, &v, sizeof v);
}
// The same past the caches, a non-temporal store that does not first read p's line from memory;
// p aligned to the vector. For the kernels that stream (depthwise_pixel_major_body), under AVX2 and
// AVX-512. Compiled for their sets, so not always_inline: the compilers inline them only once
// the code around them is compiled for that set too.
__attribute__((target("avx"))) inline void stream_vector(float* p, const FloatVector<8>::type& v) {
  _mm256_stream_ps(p, v);
}
__attribute__((target("avx512f"))) inline void stream_vector(float* p, const FloatVector<16>::type& v) {
  _mm512_stream_ps(p, v);
}

}  // namespace porta::detail
