#pragma once
// The one GEMM core of the CPU backend: matmul, gemm and conv2d all reduce to it. Operands are
// read in their storage dtype and converted to f32 while packed; C is f32.
#include <cstddef>
#include <cstdint>
#include <functional>

#include "porta/dtype.hpp"

namespace porta::detail {

// An operand that the GEMM packs by calling back rather than by reading a matrix: e.g. the
// im2col view of a convolution's input, which then never exists in full.
class GemmPanelSource {
 public:
  virtual ~GemmPanelSource() = default;
  // Packs lanes [lane0, lane0 + lanes) (rows of op(A), or columns of op(B)) by depth
  // [p0, p0 + depth) into panels of `width` lanes, k-major inside a panel, zero-padding the last.
  virtual void pack(std::int64_t lane0, std::int64_t lanes, std::int64_t p0, std::int64_t depth, std::int64_t width,
                    float* dst) const = 0;
};

// op(X) of a row-major matrix X in storage dtype `dtype`: element (i, j) of op(X) is
// data[i * ld + j], or data[j * ld + i] when `trans`. Or, with `source` set, whatever it packs.
struct GemmOperand {
  const std::byte* data = nullptr;
  DType dtype = DType::f32;
  std::int64_t ld = 0;
  bool trans = false;
  const GemmPanelSource* source = nullptr;

  static GemmOperand f32(const float* data, std::int64_t ld, bool trans = false) {
    return {reinterpret_cast<const std::byte*>(data), DType::f32, ld, trans};
  }
  static GemmOperand packed_by(const GemmPanelSource& source) { return {.source = &source}; }
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
