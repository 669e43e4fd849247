#pragma once
// The two steps of blocked (flash-style) attention that are bound by arithmetic, compiled per
// instruction set (vector_kernels.hpp): a product into a panel of attention_panel_columns columns,
// which serves both the scores and the weighted sum of v, and the online softmax of a block of
// scores. The scores are held transposed, a row per key and a column per query, so that every loop
// of the softmax runs along the queries in whole vectors with no sum across lanes, and k is read in
// place. backends/cpu/ops/attention.cpp drives them over key blocks that stay in cache.
#include <cmath>
#include <cstdint>
#include <limits>

#include "backends/cpu/kernels/float_vector.hpp"
#include "backends/cpu/kernels/vector_math.hpp"

namespace porta::detail {

// Columns of every panel: the queries of a block, and the slices of v and of the output.
inline constexpr std::int64_t attention_panel_columns = 64;

// c[r, :] (+)= sum over p of a[r * a_row + p * a_depth] * b[p * ldb + :], for `rows` rows of one panel,
// at least its first `columns` columns (the strips that hold them; the rest of c is left as it was).
using AttentionPanelFn = void (*)(std::int64_t depth, const float* a, std::int64_t a_row, std::int64_t a_depth,
                                  std::int64_t rows, std::int64_t columns, const float* b, std::int64_t ldb, float* c,
                                  std::int64_t ldc, bool accumulate);

// Turns `keys` rows of transposed scores (a row per key, a column per query, ld attention_panel_columns)
// into their weights exp(s - max), updating each query's running max and sum; rescale[q] receives the
// factor by which that query's partial output must be multiplied (1 where the max held).
using AttentionSoftmaxFn = void (*)(float* scores, std::int64_t keys, float* max, float* sum, float* rescale);

template <int W>
[[gnu::always_inline]] inline void splat(typename FloatVector<W>::type& v, float x) {
  float lanes[W];
  for (float& lane : lanes) lane = x;
  load_vector<W>(v, lanes);
}

// R rows of a strip of N vectors of W floats of the panel, held in registers across the whole depth.
template <int W, int R, int N>
[[gnu::always_inline]] inline void panel_rows(std::int64_t depth, const float* a, std::int64_t a_row,
                                              std::int64_t a_depth, const float* b, std::int64_t ldb, float* c,
                                              std::int64_t ldc, bool accumulate) {
  using V = typename FloatVector<W>::type;
  V acc[R][N] = {};
  if (accumulate)
    for (int r = 0; r < R; ++r)
      for (int n = 0; n < N; ++n) load_vector<W>(acc[r][n], c + r * ldc + n * W);
  for (std::int64_t p = 0; p < depth; ++p) {
    V bv[N];
#pragma GCC unroll 16
    for (int n = 0; n < N; ++n) load_vector<W>(bv[n], b + p * ldb + n * W);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      V av;
      splat<W>(av, a[r * a_row + p * a_depth]);
#pragma GCC unroll 16
      for (int n = 0; n < N; ++n) acc[r][n] += av * bv[n];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int n = 0; n < N; ++n) store_vector<W>(c + r * ldc + n * W, acc[r][n]);
}

// Rows [0, rows) of one strip: blocks of R rows, then of 4, 2 and 1 for the rest, so that a block
// keeps enough sums in flight to hide the multiply-add latency.
template <int W, int R, int N>
[[gnu::always_inline]] inline void strip_rows(std::int64_t depth, const float* a, std::int64_t a_row,
                                              std::int64_t a_depth, std::int64_t rows, const float* b,
                                              std::int64_t ldb, float* c, std::int64_t ldc, bool accumulate) {
  std::int64_t r = 0;
  for (; r + R <= rows; r += R)
    panel_rows<W, R, N>(depth, a + r * a_row, a_row, a_depth, b, ldb, c + r * ldc, ldc, accumulate);
  if constexpr (R > 1) {
    constexpr int fewer = R > 4 ? 4 : R / 2;
    strip_rows<W, fewer, N>(depth, a + r * a_row, a_row, a_depth, rows - r, b, ldb, c + r * ldc, ldc, accumulate);
  }
}

// The panel in strips of N vectors, each R rows at a time: a block's R x N sums, N vectors of b and
// a broadcast of a must fit the registers (AVX-512: 4 x 4 of its 32; AVX2 and SSE2: 6 x 2 of 16,
// as their GEMM tiles, where one row of all 64 columns reloaded b, 8 or 16 vectors, per 8 or 16
// multiply-adds).
// Only the strips that hold `columns`: a last block of few queries scores only theirs.
template <int W, int R, int N>
[[gnu::always_inline]] inline void attention_panel_body(std::int64_t depth, const float* a, std::int64_t a_row,
                                                        std::int64_t a_depth, std::int64_t rows, std::int64_t columns,
                                                        const float* b, std::int64_t ldb, float* c, std::int64_t ldc,
                                                        bool accumulate) {
  static_assert(attention_panel_columns % (N * W) == 0);
  for (std::int64_t strip = 0; strip < columns; strip += N * W)
    strip_rows<W, R, N>(depth, a, a_row, a_depth, rows, b + strip, ldb, c + strip, ldc, accumulate);
}

// Plain loops along the queries, which the compiler vectorises: each query's max, weights and sum
// are its own lane.
[[gnu::always_inline]] inline void attention_softmax_body(float* scores, std::int64_t keys, float* max, float* sum,
                                                          float* rescale) {
  constexpr std::int64_t queries = attention_panel_columns;
  constexpr float hidden = -std::numeric_limits<float>::infinity();
  const ExpRange range = opaque_exp_range();
  float top[queries], added[queries] = {};
  for (std::int64_t q = 0; q < queries; ++q) top[q] = max[q];
  for (std::int64_t j = 0; j < keys; ++j)
    for (std::int64_t q = 0; q < queries; ++q) {
      const float s = scores[j * queries + q];
      top[q] = s > top[q] ? s : top[q];
    }
  for (std::int64_t j = 0; j < keys; ++j)
    for (std::int64_t q = 0; q < queries; ++q) {  // below range.lo the weight is under a denormal: 0
      const float x = scores[j * queries + q] - top[q];
      const float w = x < range.lo || top[q] == hidden ? 0.0f : exp_clamped(x, range);
      scores[j * queries + q] = w;
      added[q] += w;
    }
  for (std::int64_t q = 0; q < queries; ++q) {
    rescale[q] = top[q] == max[q] ? 1.0f : std::exp(max[q] - top[q]);
    sum[q] = sum[q] * rescale[q] + added[q];
    max[q] = top[q];
  }
}

}  // namespace porta::detail
