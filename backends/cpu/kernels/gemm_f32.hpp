#pragma once
// The one f32 GEMM core of the CPU backend: matmul, gemm and conv2d all reduce to it.
#include <cstdint>
#include <functional>

namespace porta::detail {

// A finished block of C: rows [row, row + rows), columns [col, col + cols).
struct GemmTile {
  std::int64_t row, col, rows, cols;
};

// Runs once per finished tile, while it is still in cache: bias, activation, dtype conversion.
using GemmEpilogue = std::function<void(const GemmTile&)>;

// C = op(A) op(B), all row-major: op(A) is [m, k] (A stored [k, m] when trans_a), op(B) is
// [k, n] (B stored [n, k] when trans_b), C is [m, n]. C is overwritten, never read first.
// Parallel over tiles of C; every element is summed by one task in a fixed order, so results do
// not depend on the thread count. Callers may call it from inside their own parallel loops.
void gemm_f32(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
              bool trans_a, const float* b, std::int64_t ldb, bool trans_b, float* c,
              std::int64_t ldc, const GemmEpilogue& epilogue = {});

}  // namespace porta::detail
