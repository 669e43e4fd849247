#pragma once
// A one-row GEMM over B's rows as stored: y[j] = sum over p < k of x[p] * w[p * ldw + j] for
// j < cols, B's rows scaled by x's elements and added into y four at a time, so that y (a task's
// columns, in L1) is loaded and stored once per four rows of B streamed. Each element's sum runs
// over p in order, the same in the vector body and the scalar tail (no contraction: ISO C++).
// Compiled per instruction set (vector_kernels.hpp), W its vector width: the baseline build's
// 4-float loop ran a 1x1000x2048 product at 20 GFLOP/s on Zen 5, oneDNN at 50.
#include <cstdint>

#include "backends/cpu/kernels/float_vector.hpp"

namespace porta::detail {

using GemvRowsFn = void (*)(std::int64_t k, const float* x, const float* w, std::int64_t ldw, std::int64_t cols,
                            float* y);

template <int W>
[[gnu::always_inline]] inline void gemv_rows_body(std::int64_t k, const float* x, const float* w, std::int64_t ldw,
                                                  std::int64_t cols, float* y) {
  using V = typename FloatVector<W>::type;
  for (std::int64_t j = 0; j < cols; ++j) y[j] = 0.0f;
  constexpr int rows = 4;
  std::int64_t p = 0;
  for (; p + rows <= k; p += rows) {
    const float* r = w + p * ldw;
    float scale[rows];  // held in registers: read through x, they would be reloaded after every store to y
    for (int i = 0; i < rows; ++i) scale[i] = x[p + i];
    std::int64_t j = 0;
    for (; j + W <= cols; j += W) {
      V sum;
      __builtin_memcpy(&sum, y + j, sizeof(V));
#pragma GCC unroll 4
      for (int i = 0; i < rows; ++i) {
        V b;
        __builtin_memcpy(&b, r + i * ldw + j, sizeof(V));
        sum = sum + scale[i] * b;
      }
      __builtin_memcpy(y + j, &sum, sizeof(V));
    }
    for (; j < cols; ++j) {
      float sum = y[j];
#pragma GCC unroll 4
      for (int i = 0; i < rows; ++i) sum = sum + scale[i] * r[i * ldw + j];
      y[j] = sum;
    }
  }
  for (; p < k; ++p)
    for (std::int64_t j = 0; j < cols; ++j) y[j] += x[p] * w[p * ldw + j];
}

}  // namespace porta::detail
