#pragma once
// The GEMM core of the CPU backend, for matmul and gemm (conv2d drives the same micro-kernels
// itself, backends/cpu/ops/conv2d.cpp). Operands are read in their storage dtype and converted
// to f32 while packed; C is f32.
#include <cstddef>
#include <cstdint>
#include <functional>

#include "porta/dtype.hpp"

namespace porta::detail {

// op(X) of a row-major matrix X in storage dtype `dtype`: element (i, j) of op(X) is
// data[i * ld + j], or data[j * ld + i] when `trans`.
struct GemmOperand {
  const std::byte* data = nullptr;
  DType dtype = DType::f32;
  std::int64_t ld = 0;
  bool trans = false;

  static GemmOperand f32(const float* data, std::int64_t ld, bool trans = false) {
    return {reinterpret_cast<const std::byte*>(data), DType::f32, ld, trans};
  }
  GemmOperand offset(std::int64_t elements) const {
    return {data + elements * static_cast<std::int64_t>(size_of(dtype)), dtype, ld, trans};
  }
};

// A finished block of C: rows [row, row + rows), columns [col, col + cols).
struct GemmTile {
  std::int64_t row, col, rows, cols;
};

// Runs once per finished tile, while it is still in cache: bias, activation, dtype conversion.
// Tiles do not overlap and cover C; they may run concurrently.
using GemmEpilogue = std::function<void(const GemmTile&)>;

// C[m, n] = op(A)[m, k] op(B)[k, n], C row-major with leading dimension ldc, overwritten, never
// read first. Every element is summed in an order fixed by the micro-kernel and the cache
// blocking alone, so results do not depend on the thread count. Callers may call it from inside
// their own parallel loops; small problems run on the calling thread.
void gemm_f32(std::int64_t m, std::int64_t n, std::int64_t k, const GemmOperand& a, const GemmOperand& b,
              float* c, std::int64_t ldc, const GemmEpilogue& epilogue = {});

}  // namespace porta::detail
