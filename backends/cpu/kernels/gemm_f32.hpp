#pragma once
// The GEMM core of the CPU backend, for matmul and gemm (conv2d drives the same micro-kernels
// itself, backends/cpu/ops/conv2d.cpp). Operands are read in their storage dtype and converted
// to f32 while packed; C is f32.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "backends/cpu/plans/gemm_plan.hpp"
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

// op(B) packed once into the panels that the plan of a shape reads: a layer's constant weights,
// packed when the graph is prepared rather than on every call. Empty where that plan reads no
// packed panels. The kernel width and blocking it was packed for travel with it, and a call whose
// plan differs packs B itself.
struct PackedB {
  std::int64_t nr = 0, kc = 0, nc = 0;
  std::vector<float> panels;  // column slices of nc, k * nc floats apart, each in depth slices of kc
};
PackedB pack_b_ahead(const GemmShape& shape, const GemmOperand& b);

// C[m, n] = op(A)[m, k] op(B)[k, n], C row-major with leading dimension ldc, overwritten, never
// read first. Every element is summed in an order fixed by the micro-kernel and the cache
// blocking alone, so results do not depend on the thread count. Callers may call it from inside
// their own parallel loops; small problems run on the calling thread. `packed_b`, where given,
// is op(B) as pack_b_ahead packed it for this shape.
void gemm_f32(std::int64_t m, std::int64_t n, std::int64_t k, const GemmOperand& a, const GemmOperand& b,
              float* c, std::int64_t ldc, const GemmEpilogue& epilogue = {}, const PackedB* packed_b = nullptr);

}  // namespace porta::detail
