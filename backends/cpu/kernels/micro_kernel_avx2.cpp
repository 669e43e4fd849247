// AVX2+FMA micro-kernels. Wide: 6 rows x 16 columns of C in 12 ymm accumulators; per step of k,
// two loads of B and 6 broadcasts of A feed 12 FMAs within the 16 registers.
// Tail, for a convolution's last filter panel where at most 8 filters are left, and a GEMM's last
// panel of at most 8 columns: the wide kernel's 6 rows x 8 columns (24 filters are a panel of 16
// and one of 8, not two of 16 half of whose second is padding).
// Three-vector, for convolutions whose filters it pads no more than the wide kernel and its tail
// (KernelSet::for_filters_of; 24 filters or a multiple, MobileNet-V2's and EfficientNet's 24- and
// 144-filter layers): 4 rows x 24 columns, three loads and 4 broadcasts per 12 FMAs, one pass over
// A's rows where the wide kernel and its tail pass twice.
#include <immintrin.h>

#include "backends/cpu/kernels/micro_kernel.hpp"

namespace porta::detail {
namespace {

constexpr int mr = 6;

// A mask of the first n of 8 lanes (none where n <= 0).
__attribute__((target("avx2"), always_inline)) inline __m256i first_lanes(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// 8 floats at p, or only the lanes m selects (the others zero).
__attribute__((target("avx2,fma"), always_inline)) inline __m256 load(bool whole, const float* p, __m256i m) {
  return whole ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m);
}

// A finished tile's sums into C (ldc apart), with F's epilogue (micro_kernel.hpp). Masked loads
// and stores keep the lanes past `cols` out of memory; whole vectors take plain ones (vmaskmovps
// stores are slow on AMD).
template <int Mr, int Vecs>
struct StoreTile {
  template <TileFinish F>
  __attribute__((target("avx2,fma"))) static void run(__m256 (&acc)[Mr][Vecs], float* c, std::int64_t ldc, int cols,
                                                      const TileEpilogue* e, const float* residual) {
    bool whole[Vecs];
    __m256i lanes[Vecs];
    __m256 bias[Vecs];
#pragma GCC unroll 3
    for (int v = 0; v < Vecs; ++v) {
      whole[v] = cols >= 8 * (v + 1);
      lanes[v] = first_lanes(cols - 8 * v);
      bias[v] = F.epilogue && e->bias ? load(whole[v], e->bias + 8 * v, lanes[v]) : _mm256_setzero_ps();
    }
#pragma GCC unroll 6
    for (int i = 0; i < Mr; ++i, c += ldc) {
#pragma GCC unroll 3
      for (int v = 0; v < Vecs; ++v) {
        __m256 sum = acc[i][v];
        if constexpr (F.accumulate) sum = _mm256_add_ps(sum, load(whole[v], c + 8 * v, lanes[v]));
        if constexpr (F.epilogue) {
          const __m256 r = F.residual ? load(whole[v], residual + i * e->ld_residual + 8 * v, lanes[v])
                                      : _mm256_setzero_ps();
          finish_lanes<F>(sum, bias[v], r);
        }
        if (whole[v]) {
          _mm256_storeu_ps(c + 8 * v, sum);
        } else {
          _mm256_maskstore_ps(c + 8 * v, lanes[v], sum);
        }
      }
    }
  }
};

// One Mr x (8 * Vecs) tile's sums, added to acc. A is read by columns (element (i, p) at
// a[shift[t] + p * lda + i]) or by rows (at a[shift[t] + i * lda + p]), streamed or not; streamed, the next tile's rows
// are fetched even where rows alias in L1: Mr + Mr rows, at most 6 + 6, fit a set's 12 ways (4096x16x4096 against
// oneDNN-AVX2 1.16 along the rows, 1.22 the next tile). Where `masked`, only B's first `cols`
// lanes are read: a B read in place may end within the panel.
template <int Mr, int Vecs, ARead read, bool masked>
__attribute__((target("avx2,fma"))) void sum_tile(__m256 (&acc)[Mr][Vecs], std::int64_t depth, const float* a,
                                                  std::int64_t lda, const Taps& taps, const float* b, int cols) {
  static_assert(read != ARead::streamed_along_rows, "the AVX2 kernels stream the next tile's rows");
  __m256i lanes[Vecs];
#pragma GCC unroll 3
  for (int v = 0; v < Vecs; ++v) lanes[v] = first_lanes(cols - 8 * v);
  constexpr bool columns = read == ARead::columns;
  const std::int64_t a_step = columns ? lda : 1, a_row = columns ? 1 : lda;
  const std::int64_t b_step = taps.b_step(8 * Vecs);
  for (int t = 0; t < taps.count; ++t) {
    const float* a_p = a + taps.shift[t];
    const float* b_p = b + t * taps.b_stride;
    for (std::int64_t p = 0; p < depth; ++p, a_p += a_step, b_p += b_step) {
      if constexpr (read == ARead::streamed_next_tile) {
        if (p % 16 == 0) {
#pragma GCC unroll 6
          for (int i = 0; i < Mr; ++i) _mm_prefetch(reinterpret_cast<const char*>(a_p + (i + Mr) * a_row), _MM_HINT_T0);
        }
      }
      __m256 b_v[Vecs];
#pragma GCC unroll 3
      for (int v = 0; v < Vecs; ++v) b_v[v] = load(!masked, b_p + 8 * v, lanes[v]);
#pragma GCC unroll 6
      for (int i = 0; i < Mr; ++i) {
        const __m256 a_i = _mm256_broadcast_ss(a_p + i * a_row);
#pragma GCC unroll 3
        for (int v = 0; v < Vecs; ++v) acc[i][v] = _mm256_fmadd_ps(a_i, b_v[v], acc[i][v]);
      }
    }
  }
}

// `tiles` tiles of consecutive rows (MicroKernelFn), each summed in registers and stored once.
template <int Mr, int Vecs, ARead read>
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
  const std::int64_t a_tile = read == ARead::columns ? Mr : Mr * lda;
  for (std::int64_t tile = 0; tile < tiles; ++tile, a += a_tile, c += Mr * ldc) {
    // C's tile is read and written only after the whole depth: fetch it meanwhile, so that its
    // cache misses do not stall the end of every tile.
#pragma GCC unroll 6
    for (int i = 0; i < Mr; ++i) {
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
#pragma GCC unroll 2
      for (int v = 1; v < Vecs - 1; ++v) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 8 * v), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 8 * Vecs - 1), _MM_HINT_T0);
    }
    __m256 acc[Mr][Vecs];
#pragma GCC unroll 6
    for (int i = 0; i < Mr; ++i)
#pragma GCC unroll 3
      for (int v = 0; v < Vecs; ++v) acc[i][v] = _mm256_setzero_ps();
    if (taps.b_ends_within(cols, 8 * Vecs)) {
      sum_tile<Mr, Vecs, read, true>(acc, depth, a, lda, taps, b, cols);
    } else {
      sum_tile<Mr, Vecs, read, false>(acc, depth, a, lda, taps, b, cols);
    }
    with_tile_finish<StoreTile<Mr, Vecs>>(finish, acc, c, ldc, cols, epilogue, residual);
    if (residual) residual += Mr * epilogue->ld_residual;
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

// A kernel that reads A by columns, by rows, and by rows streamed (the next tile's).
template <int Mr, int Vecs>
MicroKernel kernels() {
  return {.isa = "avx2", .mr = Mr, .nr = 8 * Vecs, .run_columns_a = kernel<Mr, Vecs, ARead::columns>,
          .run_rows_a = kernel<Mr, Vecs, ARead::rows>, .run_streamed_a = kernel<Mr, Vecs, ARead::streamed_next_tile>};
}

}  // namespace

MicroKernel avx2_micro_kernel() {
  MicroKernel wide = with_tail(kernels<mr, 2>(), 8, kernel<mr, 1, ARead::rows>, kernel<mr, 1, ARead::columns>);
  wide.run_shifted_b = shifted_b;
  return wide;
}

MicroKernel avx2_three_vector_micro_kernel() { return kernels<4, 3>(); }

}  // namespace porta::detail
