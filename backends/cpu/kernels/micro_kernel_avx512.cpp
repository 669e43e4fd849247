// AVX-512 micro-kernels. Wide: 14 rows x 32 columns of C in 28 zmm accumulators; per step of k,
// two loads of B and 14 broadcasts of A feed 28 FMAs, leaving 4 registers for operands.
// Narrow, for C with at most 16 columns (where the wide one would mostly multiply zero padding):
// 28 rows x 16 columns, one load of B and 28 broadcasts per 28 FMAs.
// Tail, for a convolution's last filter panel where at most 16 filters are left, and a GEMM's
// last panel of at most 16 columns: the wide kernel's 14 rows x 16 columns (112 filters are three
// panels of 32 and one of 16); the 8-row kernel's 8 x 16.
// Seven rows, for convolutions whose segments of A's rows are 7 long or a multiple of it (a 7x7
// image, output rows of 7 pixels), which tiles of 14 pad, and GEMMs of 33 to 48 columns beside an
// A read in place (gemm_kernel_for): 7 x 48, three loads and 7 broadcasts
// per 21 FMAs. Unpadded it runs as fast as the wide kernel (a standalone sweep of 1x1 layers,
// 214-249 GFLOP/s on one Zen 5 core); the rows it saves are the gain, and where it computes as
// much as the wide kernel, its wider panels (filter_micro_kernel_for).
// Pointwise, for 1x1 layers of 64 filters (ResNet-50's res2 layers that narrow to 64): 6 rows x
// 64 columns, four loads and 6 broadcasts per 24 FMAs, so that one pass over A's rows writes whole
// output pixels (the wide kernel's two panels pass twice, each writing half of every pixel's
// cache lines). Against oneDNN in the same runs (medians of 5-7, 1 thread): 8x256x56x56->64
// 0.95 -> 1.13, 1x64x56x56->64 0.92 -> 0.95, but 1x256x56x56->64 0.96 -> 0.93 (in depth slices
// then sized to L1, three against the wide kernel's two). With more filters, in panels of 64,
// 8x64x56x56->256 ran slower than in panels of 32 (0.89 against 0.95-0.96 of oneDNN). Also a
// GEMM's, where A's rows stream from memory and C's columns are whole panels of 64
// (gemm_kernel_for).
// Aliasing, for A's rows read in place at a stride that aliases in L1 (rows_alias_in_l1): 8 rows
// x 32 or 16 columns, fewer rows than an L1 set has ways (12 on Zen 5), so that the rows do not
// evict each other, nor the B panel's lines, even where they all fall into one set. Reading A
// as it is, 12 rows ran faster than 8, 10 and 14 and than a spaced copy of the rows; with its
// rows streamed along (ARead::streamed_along_rows), 8 ran faster than 12 (medians of 5 against
// the faster of oneDNN and OpenBLAS, 1 thread: 4096x16x4096 1.08 -> 1.17, 4096x32x4096 0.89 ->
// 1.13, 2048x32x2048 1.05 -> 1.24), and not slower from cache (512x16x512, 3072x16x1024 level).
// A GEMM's last row panel runs on the kernel of fewest rows that holds it, the aliasing kernels'
// 8 or these 4 (x 32 or 16 columns), rather than as a tile of mostly zero rows.
#include <immintrin.h>

#include "backends/cpu/kernels/micro_kernel.hpp"

namespace porta::detail {
namespace {

constexpr int mr = 14;

// A finished tile's sums into C (ldc apart), with F's epilogue (micro_kernel.hpp). Masked loads
// and stores keep the lanes past `cols` out of memory.
template <int Mr, int Vecs>
struct StoreTile {
  template <TileFinish F>
  __attribute__((target("avx512f,fma"))) static void run(__m512 (&acc)[Mr][Vecs], float* c, std::int64_t ldc,
                                                         const __mmask16 (&lanes)[Vecs], const TileEpilogue* e,
                                                         const float* residual) {
    __m512 bias[Vecs];
#pragma GCC unroll 4
    for (int v = 0; v < Vecs; ++v)
      bias[v] = F.epilogue && e->bias ? _mm512_maskz_loadu_ps(lanes[v], e->bias + 16 * v) : _mm512_setzero_ps();
#pragma GCC unroll 28
    for (int i = 0; i < Mr; ++i, c += ldc) {
#pragma GCC unroll 4
      for (int v = 0; v < Vecs; ++v) {
        __m512 sum = acc[i][v];
        if constexpr (F.accumulate) sum = _mm512_add_ps(sum, _mm512_maskz_loadu_ps(lanes[v], c + 16 * v));
        if constexpr (F.epilogue) {
          const __m512 r = F.residual ? _mm512_maskz_loadu_ps(lanes[v], residual + i * e->ld_residual + 16 * v)
                                      : _mm512_setzero_ps();
          finish_lanes<F>(sum, bias[v], r);
        }
        _mm512_mask_storeu_ps(c + 16 * v, lanes[v], sum);
      }
    }
  }
};

// One Mr x (16 * Vecs) tile's sums, added to acc. A is read by columns (element (i, p) at
// a[shift[t] + p * lda + i]) or by rows (at a[shift[t] + i * lda + p]), streamed or not (ARead). Where
// `masked`, only B's lanes in `lanes` are read: a B read in place may end within the panel
// (packed panels are zero-padded; masked loads throughout cost 4096x16x4096 7 %).
template <int Mr, int Vecs, ARead read, bool masked>
__attribute__((target("avx512f,fma"))) void sum_tile(__m512 (&acc)[Mr][Vecs], std::int64_t depth, const float* a,
                                                     std::int64_t lda, const Taps& taps, const float* b,
                                                     const __mmask16 (&lanes)[Vecs]) {
  constexpr bool columns = read == ARead::columns;
  // By rows, row i is at row_base[i / 3] + (i % 3) * lda: a base pointer per three rows and one
  // stride register, so that the rows' addresses fit the general registers (with a pointer per
  // row, or an offset per row, the compiler reloaded some from the stack every step).
  constexpr int bases = columns ? 1 : (Mr + 2) / 3;
  const std::int64_t a_step = columns ? lda : 1;
  const std::int64_t row_bytes = columns ? 0 : lda * std::int64_t{sizeof(float)};
  constexpr bool streamed = read == ARead::streamed_next_tile || read == ARead::streamed_along_rows;
  const std::int64_t fetch_offset = read == ARead::streamed_along_rows ? along_rows_ahead : Mr * row_bytes;
  const std::int64_t b_step = taps.b_step(16 * Vecs);
  for (int t = 0; t < taps.count; ++t) {
    const float* a_p = a + taps.shift[t];
    const float* b_p = b + t * taps.b_stride;
    const char* row_base[bases];
#pragma GCC unroll 10
    for (int g = 0; g < bases; ++g) row_base[g] = reinterpret_cast<const char*>(a_p) + 3 * g * row_bytes;
    for (std::int64_t p = 0; p < depth; ++p, a_p += a_step, b_p += b_step) {
      __m512 b_v[Vecs];
#pragma GCC unroll 4
      for (int v = 0; v < Vecs; ++v)
        b_v[v] = masked ? _mm512_maskz_loadu_ps(lanes[v], b_p + 16 * v) : _mm512_loadu_ps(b_p + 16 * v);
#pragma GCC unroll 28
      for (int i = 0; i < Mr; ++i) {
        const float* a_at =
            columns ? a_p + i : reinterpret_cast<const float*>(row_base[i / 3] + (i % 3) * row_bytes);
        const __m512 a_i = _mm512_set1_ps(*a_at);
#pragma GCC unroll 4
        for (int v = 0; v < Vecs; ++v) acc[i][v] = _mm512_fmadd_ps(a_i, b_v[v], acc[i][v]);
      }
      if constexpr (streamed) {
        if (p % 16 == 0) {
#pragma GCC unroll 28
          for (int i = 0; i < Mr; ++i) _mm_prefetch(row_base[i / 3] + (i % 3) * row_bytes + fetch_offset, _MM_HINT_T0);
        }
      }
      if constexpr (!columns) {
#pragma GCC unroll 10
        for (int g = 0; g < bases; ++g) row_base[g] += sizeof(float);
      }
    }
  }
}

// `tiles` tiles of consecutive rows (MicroKernelFn), each summed in registers and stored once.
template <int Mr, int Vecs, ARead read>
__attribute__((target("avx512f,fma"), flatten)) void kernel(const MicroKernelArgs& call) {
  const std::int64_t depth = call.depth, lda = call.lda, ldc = call.ldc, tiles = call.tiles;
  const Taps& taps = call.taps;
  const float *a = call.a, *b = call.b;
  float* c = call.c;
  const int cols = call.cols;
  const bool accumulate = call.accumulate;
  const TileEpilogue* epilogue = call.epilogue;
  static_assert(Mr <= max_mr);
  const int finish = finish_index(accumulate, epilogue);
  __mmask16 lanes[Vecs];
#pragma GCC unroll 4
  for (int v = 0; v < Vecs; ++v) {
    const int n = cols - 16 * v;
    lanes[v] = n >= 16 ? 0xFFFF : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1);
  }
  const float* residual = epilogue ? epilogue->residual : nullptr;
  const std::int64_t a_tile = read == ARead::columns ? Mr : Mr * lda;
  for (std::int64_t tile = 0; tile < tiles; ++tile, a += a_tile, c += Mr * ldc) {
    // C's tile is read and written only after the whole depth: fetch it meanwhile, so that its
    // cache misses do not stall the end of every tile.
#pragma GCC unroll 28
    for (int i = 0; i < Mr; ++i) {
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
#pragma GCC unroll 2
      for (int v = 1; v < Vecs - 1; ++v) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16 * v), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16 * Vecs - 1), _MM_HINT_T0);
    }
    __m512 acc[Mr][Vecs];
#pragma GCC unroll 28
    for (int i = 0; i < Mr; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < Vecs; ++v) acc[i][v] = _mm512_setzero_ps();
    if (taps.b_ends_within(cols, 16 * Vecs)) {
      sum_tile<Mr, Vecs, read, true>(acc, depth, a, lda, taps, b, lanes);
    } else {
      sum_tile<Mr, Vecs, read, false>(acc, depth, a, lda, taps, b, lanes);
    }
    with_tile_finish<StoreTile<Mr, Vecs>>(finish, acc, c, ldc, lanes, epilogue, residual);
    if (residual) residual += Mr * epilogue->ld_residual;
  }
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

// A kernel that reads A by columns, by rows, and by rows streamed as `streamed` says.
template <int Mr, int Vecs, ARead streamed = ARead::streamed_next_tile>
MicroKernel kernels() {
  return {.isa = "avx512", .mr = Mr, .nr = 16 * Vecs, .run_columns_a = kernel<Mr, Vecs, ARead::columns>,
          .run_rows_a = kernel<Mr, Vecs, ARead::rows>, .run_streamed_a = kernel<Mr, Vecs, streamed>};
}

}  // namespace

MicroKernel avx512_micro_kernel() {
  MicroKernel wide = with_tail(kernels<mr, 2>(), 16, kernel<mr, 1, ARead::rows>, kernel<mr, 1, ARead::columns>);
  wide.run_shifted_b = shifted_b;
  return wide;
}

MicroKernel avx512_narrow_micro_kernel() { return kernels<28, 1>(); }

MicroKernel avx512_seven_row_micro_kernel() { return kernels<7, 3>(); }

MicroKernel avx512_pointwise_micro_kernel() { return kernels<6, 4>(); }

MicroKernel avx512_aliasing_micro_kernel(bool narrow) {
  constexpr ARead along = ARead::streamed_along_rows;
  if (narrow) return kernels<8, 1, along>();
  return with_tail(kernels<8, 2, along>(), 16, kernel<8, 1, ARead::rows>, kernel<8, 1, ARead::columns>);
}

MicroKernel avx512_four_row_micro_kernel(bool narrow) { return narrow ? kernels<4, 1>() : kernels<4, 2>(); }

}  // namespace porta::detail
