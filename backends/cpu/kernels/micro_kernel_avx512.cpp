// AVX-512 micro-kernel: 14 rows x 32 columns of C in 28 zmm accumulators; per step of k, two
// aligned loads of B and 14 broadcasts of A feed 28 FMAs, leaving 4 registers for operands.
#include <immintrin.h>

#include "backends/cpu/kernels/micro_kernel.hpp"

namespace porta::detail {
namespace {

constexpr int mr = 14;
constexpr int nr = 32;

// A is packed (element (i, p) at a[p * mr + i]) or read in place (at a[i * lda + p]).
template <bool packed_a>
__attribute__((target("avx512f,fma"))) void kernel(std::int64_t depth, const float* a, std::int64_t lda,
                                                   const float* b, float* c, std::int64_t ldc, bool accumulate) {
  const std::int64_t a_step = packed_a ? mr : 1, a_row = packed_a ? 1 : lda;
  __m512 lo[mr], hi[mr];
#pragma GCC unroll 14
  for (int i = 0; i < mr; ++i) lo[i] = hi[i] = _mm512_setzero_ps();
  // C's tile is read and written only after the whole depth: fetch it meanwhile, so that its
  // cache misses do not stall the end of every call.
#pragma GCC unroll 14
  for (int i = 0; i < mr; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + nr - 1), _MM_HINT_T0);
  }
  for (std::int64_t p = 0; p < depth; ++p, a += a_step, b += nr) {
    const __m512 b_lo = _mm512_load_ps(b), b_hi = _mm512_load_ps(b + 16);
#pragma GCC unroll 14
    for (int i = 0; i < mr; ++i) {
      const __m512 a_i = _mm512_set1_ps(a[i * a_row]);
      lo[i] = _mm512_fmadd_ps(a_i, b_lo, lo[i]);
      hi[i] = _mm512_fmadd_ps(a_i, b_hi, hi[i]);
    }
  }
#pragma GCC unroll 14
  for (int i = 0; i < mr; ++i, c += ldc) {
    if (accumulate) {
      lo[i] = _mm512_add_ps(lo[i], _mm512_loadu_ps(c));
      hi[i] = _mm512_add_ps(hi[i], _mm512_loadu_ps(c + 16));
    }
    _mm512_storeu_ps(c, lo[i]);
    _mm512_storeu_ps(c + 16, hi[i]);
  }
}

__attribute__((target("avx512f,fma"))) void packed(std::int64_t depth, const float* a, const float* b, float* c,
                                                   std::int64_t ldc, bool accumulate) {
  kernel<true>(depth, a, mr, b, c, ldc, accumulate);
}

// B read at a shift per step of k: masked loads keep the lanes past `cols` out of memory, and
// masked stores keep them out of C.
__attribute__((target("avx512f,fma"))) void shifted_b(std::int64_t depth, const float* a, const float* b,
                                                      const std::int64_t* shift, float* c, std::int64_t ldc,
                                                      int rows, int cols, bool accumulate) {
  const auto lanes = [](int n) -> __mmask16 { return n >= 16 ? 0xFFFF : n <= 0 ? 0 : (1u << n) - 1; };
  const __mmask16 m_lo = lanes(cols), m_hi = lanes(cols - 16);
  __m512 lo[mr], hi[mr];
#pragma GCC unroll 14
  for (int i = 0; i < mr; ++i) lo[i] = hi[i] = _mm512_setzero_ps();
  for (std::int64_t p = 0; p < depth; ++p, a += mr) {
    const float* b_p = b + shift[p];
    const __m512 b_lo = _mm512_maskz_loadu_ps(m_lo, b_p), b_hi = _mm512_maskz_loadu_ps(m_hi, b_p + 16);
#pragma GCC unroll 14
    for (int i = 0; i < mr; ++i) {
      const __m512 a_i = _mm512_set1_ps(a[i]);
      lo[i] = _mm512_fmadd_ps(a_i, b_lo, lo[i]);
      hi[i] = _mm512_fmadd_ps(a_i, b_hi, hi[i]);
    }
  }
#pragma GCC unroll 14
  for (int i = 0; i < mr; ++i, c += ldc) {
    if (i >= rows) break;
    if (accumulate) {
      lo[i] = _mm512_add_ps(lo[i], _mm512_maskz_loadu_ps(m_lo, c));
      hi[i] = _mm512_add_ps(hi[i], _mm512_maskz_loadu_ps(m_hi, c + 16));
    }
    _mm512_mask_storeu_ps(c, m_lo, lo[i]);
    _mm512_mask_storeu_ps(c + 16, m_hi, hi[i]);
  }
}

}  // namespace

MicroKernel avx512_micro_kernel() { return {.isa = "avx512", .mr = mr, .nr = nr, .run = packed,
                                            .run_unpacked_a = kernel<false>, .run_shifted_b = shifted_b}; }

}  // namespace porta::detail
