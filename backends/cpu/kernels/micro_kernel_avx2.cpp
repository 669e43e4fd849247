// AVX2+FMA micro-kernel: 6 rows x 16 columns of C in 12 ymm accumulators; per step of k, two
// loads of B and 6 broadcasts of A feed 12 FMAs within the 16 registers.
#include <immintrin.h>

#include "backends/cpu/kernels/micro_kernel.hpp"

namespace porta::detail {
namespace {

constexpr int mr = 6;
constexpr int nr = 16;

// A mask of the first n of 8 lanes (none where n <= 0).
__attribute__((target("avx2"), always_inline)) inline __m256i first_lanes(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// 8 floats at p, or only the lanes m selects (the others zero).
__attribute__((target("avx2,fma"), always_inline)) inline __m256 load(bool whole, const float* p, __m256i m) {
  return whole ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m);
}

// A finished tile's sums into C (ldc apart), with F's epilogue (micro_kernel.hpp). Masked loads
// and stores keep the lanes past `cols` out of memory; whole tiles take plain ones (vmaskmovps
// stores are slow on AMD).
struct StoreTile {
  template <TileFinish F>
  __attribute__((target("avx2,fma"))) static void run(__m256 (&lo)[mr], __m256 (&hi)[mr], float* c, std::int64_t ldc,
                                                      int cols, const TileEpilogue* e, const float* residual) {
    const bool whole = cols >= nr;
    const __m256i m_lo = first_lanes(cols), m_hi = first_lanes(cols - 8);
    __m256 bias_lo = _mm256_setzero_ps(), bias_hi = _mm256_setzero_ps();
    if (F.epilogue && e->bias) {
      bias_lo = load(whole, e->bias, m_lo);
      bias_hi = load(whole, e->bias + 8, m_hi);
    }
#pragma GCC unroll 6
    for (int i = 0; i < mr; ++i, c += ldc) {
      if constexpr (F.accumulate) {
        lo[i] = _mm256_add_ps(lo[i], load(whole, c, m_lo));
        hi[i] = _mm256_add_ps(hi[i], load(whole, c + 8, m_hi));
      }
      if constexpr (F.epilogue) {
        __m256 r_lo = _mm256_setzero_ps(), r_hi = _mm256_setzero_ps();
        if constexpr (F.residual) {
          r_lo = load(whole, residual + i * e->ld_residual, m_lo);
          r_hi = load(whole, residual + i * e->ld_residual + 8, m_hi);
        }
        finish_lanes<F>(lo[i], bias_lo, r_lo);
        finish_lanes<F>(hi[i], bias_hi, r_hi);
      }
      if (whole) {
        _mm256_storeu_ps(c, lo[i]);
        _mm256_storeu_ps(c + 8, hi[i]);
      } else {
        _mm256_maskstore_ps(c, m_lo, lo[i]);
        _mm256_maskstore_ps(c + 8, m_hi, hi[i]);
      }
    }
  }
};

// One tile's sums, added to lo and hi. A is read by columns (element (i, p) at
// a[shift[t] + p * lda + i]) or by rows (at a[shift[t] + i * lda + p]), streamed or not; streamed, the next tile's rows
// are fetched even where rows alias in L1: 6 + 6 rows fit a set's 12 ways (4096x16x4096 against
// oneDNN-AVX2 1.16 along the rows, 1.22 the next tile). Where `masked`, only B's first `cols`
// lanes are read: a B read in place may end within the panel.
template <ARead read, bool masked>
__attribute__((target("avx2,fma"))) void sum_tile(__m256 (&lo)[mr], __m256 (&hi)[mr], std::int64_t depth,
                                                  const float* a, std::int64_t lda, const Taps& taps, const float* b,
                                                  int cols) {
  const __m256i m_lo = first_lanes(cols), m_hi = first_lanes(cols - 8);
  static_assert(read != ARead::streamed_along_rows, "the 6-row kernel streams the next tile's rows");
  constexpr bool columns = read == ARead::columns;
  const std::int64_t a_step = columns ? lda : 1, a_row = columns ? 1 : lda;
  const std::int64_t b_step = taps.b_step(nr);
  for (int t = 0; t < taps.count; ++t) {
    const float* a_p = a + taps.shift[t];
    const float* b_p = b + t * taps.b_stride;
    for (std::int64_t p = 0; p < depth; ++p, a_p += a_step, b_p += b_step) {
      if constexpr (read == ARead::streamed_next_tile) {
        if (p % 16 == 0) {
#pragma GCC unroll 6
          for (int i = 0; i < mr; ++i) _mm_prefetch(reinterpret_cast<const char*>(a_p + (i + mr) * a_row), _MM_HINT_T0);
        }
      }
      const __m256 b_lo = load(!masked, b_p, m_lo), b_hi = load(!masked, b_p + 8, m_hi);
#pragma GCC unroll 6
      for (int i = 0; i < mr; ++i) {
        const __m256 a_i = _mm256_broadcast_ss(a_p + i * a_row);
        lo[i] = _mm256_fmadd_ps(a_i, b_lo, lo[i]);
        hi[i] = _mm256_fmadd_ps(a_i, b_hi, hi[i]);
      }
    }
  }
}

// `tiles` tiles of consecutive rows (MicroKernelFn), each summed in registers and stored once.
template <ARead read>
__attribute__((target("avx2,fma"), flatten)) void kernel(const MicroKernelArgs& call) {
  const std::int64_t depth = call.depth, lda = call.lda, ldc = call.ldc, tiles = call.tiles;
  const Taps& taps = call.taps;
  const float *a = call.a, *b = call.b;
  float* c = call.c;
  const int cols = call.cols;
  const bool accumulate = call.accumulate;
  const TileEpilogue* epilogue = call.epilogue;
  const int finish = finish_index(accumulate, epilogue);
  const float* residual = epilogue ? epilogue->residual : nullptr;
  const std::int64_t a_tile = read == ARead::columns ? mr : mr * lda;
  for (std::int64_t tile = 0; tile < tiles; ++tile, a += a_tile, c += mr * ldc) {
    // C's tile is read and written only after the whole depth: fetch it meanwhile, so that its
    // cache misses do not stall the end of every tile.
#pragma GCC unroll 6
    for (int i = 0; i < mr; ++i) {
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + nr - 1), _MM_HINT_T0);
    }
    __m256 lo[mr], hi[mr];
#pragma GCC unroll 6
    for (int i = 0; i < mr; ++i) lo[i] = hi[i] = _mm256_setzero_ps();
    if (taps.b_ends_within(cols, nr)) {
      sum_tile<read, true>(lo, hi, depth, a, lda, taps, b, cols);
    } else {
      sum_tile<read, false>(lo, hi, depth, a, lda, taps, b, cols);
    }
    with_tile_finish<StoreTile>(finish, lo, hi, c, ldc, cols, epilogue, residual);
    if (residual) residual += mr * epilogue->ld_residual;
  }
}

// B read at a shift per step of k: masked loads keep the lanes past `cols` out of memory, and
// masked stores keep them out of C.
__attribute__((target("avx2,fma"))) void shifted_b(std::int64_t depth, const float* a, const float* b,
                                                   const std::int64_t* shift, float* c, std::int64_t ldc, int rows,
                                                   int cols, bool accumulate) {
  const __m256i m_lo = first_lanes(cols), m_hi = first_lanes(cols - 8);
  __m256 lo[mr], hi[mr];
#pragma GCC unroll 6
  for (int i = 0; i < mr; ++i) lo[i] = hi[i] = _mm256_setzero_ps();
  for (std::int64_t p = 0; p < depth; ++p, a += mr) {
    const float* b_p = b + shift[p];
    const __m256 b_lo = _mm256_maskload_ps(b_p, m_lo), b_hi = _mm256_maskload_ps(b_p + 8, m_hi);
#pragma GCC unroll 6
    for (int i = 0; i < mr; ++i) {
      const __m256 a_i = _mm256_broadcast_ss(a + i);
      lo[i] = _mm256_fmadd_ps(a_i, b_lo, lo[i]);
      hi[i] = _mm256_fmadd_ps(a_i, b_hi, hi[i]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < mr; ++i, c += ldc) {
    if (i >= rows) break;
    if (accumulate) {
      lo[i] = _mm256_add_ps(lo[i], _mm256_maskload_ps(c, m_lo));
      hi[i] = _mm256_add_ps(hi[i], _mm256_maskload_ps(c + 8, m_hi));
    }
    _mm256_maskstore_ps(c, m_lo, lo[i]);
    _mm256_maskstore_ps(c + 8, m_hi, hi[i]);
  }
}

}  // namespace

MicroKernel avx2_micro_kernel() {
  return {.isa = "avx2", .mr = mr, .nr = nr, .run_columns_a = kernel<ARead::columns>,
          .run_rows_a = kernel<ARead::rows>, .run_streamed_a = kernel<ARead::streamed_next_tile>,
          .run_shifted_b = shifted_b};
}

}  // namespace porta::detail
