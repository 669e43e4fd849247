#pragma once
// A GEMM tile as dot products along k, for C with few columns: c[i * ldc + j] = sum over p of
// a[i * lda + p] * bt[j * ldb + p], both operands read a vector of depths at a time. Broadcasting
// A's elements (the micro-kernels' way) loads once per multiply-add when C has 16 columns or
// fewer; here a block of R x J sums loads R + J vectors per R * J multiply-adds, and A streams at
// full vector width. Compiled per instruction set (vector_kernels.hpp), with its own vector width.
#include <cstdint>

#include "backends/cpu/kernels/float_vector.hpp"

namespace porta::detail {

using DotTileFn = void (*)(std::int64_t depth, const float* a, std::int64_t lda, std::int64_t rows, const float* bt,
                           std::int64_t ldb, std::int64_t cols, float* c, std::int64_t ldc);

// Rows [0, R) x columns [0, J), in vectors of W floats: each sum in W lanes over whole steps of W,
// the lanes then added in a fixed order, and the depth's tail added last.
template <int W, int R, int J>
[[gnu::always_inline]] inline void dot_block(std::int64_t depth, const float* a, std::int64_t lda, const float* bt,
                                             std::int64_t ldb, float* c, std::int64_t ldc) {
  using V = typename FloatVector<W>::type;
  V acc[R][J] = {};
  std::int64_t p = 0;
  for (; p + W <= depth; p += W) {
    V av[R], bv[J];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) __builtin_memcpy(&av[r], a + r * lda + p, sizeof(V));
#pragma GCC unroll 4
    for (int j = 0; j < J; ++j) __builtin_memcpy(&bv[j], bt + j * ldb + p, sizeof(V));
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int j = 0; j < J; ++j) acc[r][j] += av[r] * bv[j];
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < J; ++j) {
      float lanes[W], sum = 0.0f;
      __builtin_memcpy(lanes, &acc[r][j], sizeof lanes);
      for (const float v : lanes) sum += v;
      for (std::int64_t q = p; q < depth; ++q) sum += a[r * lda + q] * bt[j * ldb + q];
      c[r * ldc + j] = sum;
    }
}

// Blocks of R x J sums in vectors of W floats, the edges in blocks of one row or column.
template <int W, int R, int J>
[[gnu::always_inline]] inline void dot_tile_body(std::int64_t depth, const float* a, std::int64_t lda,
                                                 std::int64_t rows, const float* bt, std::int64_t ldb,
                                                 std::int64_t cols, float* c, std::int64_t ldc) {
  std::int64_t i = 0;
  for (; i + R <= rows; i += R) {
    std::int64_t j = 0;
    for (; j + J <= cols; j += J)
      dot_block<W, R, J>(depth, a + i * lda, lda, bt + j * ldb, ldb, c + i * ldc + j, ldc);
    for (; j < cols; ++j) dot_block<W, R, 1>(depth, a + i * lda, lda, bt + j * ldb, ldb, c + i * ldc + j, ldc);
  }
  for (; i < rows; ++i) {
    std::int64_t j = 0;
    for (; j + J <= cols; j += J)
      dot_block<W, 1, J>(depth, a + i * lda, lda, bt + j * ldb, ldb, c + i * ldc + j, ldc);
    for (; j < cols; ++j) dot_block<W, 1, 1>(depth, a + i * lda, lda, bt + j * ldb, ldb, c + i * ldc + j, ldc);
  }
}

}  // namespace porta::detail
