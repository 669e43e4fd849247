#pragma once
// The two steps of blocked (flash-style) attention that are bound by arithmetic, compiled per
// instruction set (vector_kernels.hpp): a product into a panel of attention_panel_columns columns,
// which serves both the scores (q kᵀ) and the weighted sum (p v), and the online softmax of a block
// of scores. backends/cpu/ops/attention.cpp drives them over key blocks that stay in cache.
#include <cmath>
#include <cstdint>
#include <limits>

#include "backends/cpu/kernels/float_vector.hpp"
#include "backends/cpu/kernels/vector_math.hpp"

namespace porta::detail {

// Columns of every panel: the key block, and the slices of v and of the output the sum runs over.
inline constexpr std::int64_t attention_panel_columns = 64;

// c[r, :] (+)= sum over p of a[r * lda + p] * b[p * ldb + :], for `rows` rows of one panel.
using AttentionPanelFn = void (*)(std::int64_t depth, const float* a, std::int64_t lda, std::int64_t rows,
                                  const float* b, std::int64_t ldb, float* c, std::int64_t ldc, bool accumulate);

// Turns `rows` rows of scores (ld attention_panel_columns, the first `keys` of each valid) into their
// weights exp(s - max), updating each row's running max and sum; rescale[r] receives the factor by
// which that row's partial output must be multiplied (0 where it had none, 1 where the max held).
using AttentionSoftmaxFn = void (*)(float* scores, std::int64_t rows, std::int64_t keys, float* max, float* sum,
                                    float* rescale);

// R rows of the panel, its columns in vectors of W floats held in registers across the whole depth.
template <int W, int R>
[[gnu::always_inline]] inline void panel_rows(std::int64_t depth, const float* a, std::int64_t lda, const float* b,
                                              std::int64_t ldb, float* c, std::int64_t ldc, bool accumulate) {
  using V = typename FloatVector<W>::type;
  constexpr int N = attention_panel_columns / W;
  V acc[R][N] = {};
  if (accumulate)
    for (int r = 0; r < R; ++r)
      for (int n = 0; n < N; ++n) load_vector<W>(acc[r][n], c + r * ldc + n * W);
  for (std::int64_t p = 0; p < depth; ++p) {
    V bv[N];
#pragma GCC unroll 16
    for (int n = 0; n < N; ++n) load_vector<W>(bv[n], b + p * ldb + n * W);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const V av = V{} + a[r * lda + p];
#pragma GCC unroll 16
      for (int n = 0; n < N; ++n) acc[r][n] += av * bv[n];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int n = 0; n < N; ++n) store_vector<W>(c + r * ldc + n * W, acc[r][n]);
}

template <int W, int R>
[[gnu::always_inline]] inline void attention_panel_body(std::int64_t depth, const float* a, std::int64_t lda,
                                                        std::int64_t rows, const float* b, std::int64_t ldb, float* c,
                                                        std::int64_t ldc, bool accumulate) {
  std::int64_t r = 0;
  for (; r + R <= rows; r += R) panel_rows<W, R>(depth, a + r * lda, lda, b, ldb, c + r * ldc, ldc, accumulate);
  for (; r < rows; ++r) panel_rows<W, 1>(depth, a + r * lda, lda, b, ldb, c + r * ldc, ldc, accumulate);
}

[[gnu::always_inline]] inline void attention_softmax_body(float* scores, std::int64_t rows, std::int64_t keys,
                                                          float* max, float* sum, float* rescale) {
  const ExpRange range = opaque_exp_range();
  for (std::int64_t r = 0; r < rows; ++r) {
    float* s = scores + r * attention_panel_columns;
    float m = max[r];
    for (std::int64_t j = 0; j < keys; ++j) m = s[j] > m ? s[j] : m;
    if (m == -std::numeric_limits<float>::infinity()) {  // every key so far hidden: nothing to weigh
      for (std::int64_t j = 0; j < keys; ++j) s[j] = 0.0f;
      rescale[r] = 1.0f;
      continue;
    }
    float added = 0.0f;
    for (std::int64_t j = 0; j < keys; ++j) {  // below range.lo the weight is under a denormal: 0
      const float x = s[j] - m;
      s[j] = x < range.lo ? 0.0f : exp_clamped(x, range);
      added += s[j];
    }
    rescale[r] = m == max[r] ? 1.0f : std::exp(max[r] - m);
    sum[r] = sum[r] * rescale[r] + added;
    max[r] = m;
  }
}

}  // namespace porta::detail
