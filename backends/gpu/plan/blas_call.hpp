#pragma once
// porta's row-major GEMM as the column-major call of a BLAS library (cuBLAS, rocBLAS): Y = op(A)
// op(B) stored row-major is Y^T = op(B)^T op(A)^T column-major, so porta's B is the library's first
// operand and A its second, and Y [M, N] is the library's [N, M] with leading dimension N. Host
// logic, tested on the CPU against a column-major reference.
#include <cstdint>

#include "backends/gpu/plan/kernel_args.hpp"

namespace porta::detail::gpu {

// How a column-major library reads an operand: as stored (column-major, leading dimension ld) or
// transposed (the stored matrix is column-major [cols, rows] with leading dimension ld).
struct BlasOperand {
  bool transpose = false;
  std::int64_t ld = 1;
};

struct BlasGemm {
  std::int64_t m = 0, n = 0, k = 0;  // the library's: m is porta's N, n is porta's M
  BlasOperand first, second;         // porta's op(B) and op(A)
  std::int64_t ld_y = 1;
  std::int64_t batch_count = 1;
  // Every batch's operands lie at batch * stride (one strided-batched call; broadcast is stride
  // 0); otherwise one call per batch at gpu::batch_offsets.
  bool uniform_batches = true;
  std::int64_t stride_first = 0, stride_second = 0, stride_y = 0;
};

BlasGemm blas_gemm(const GemmArgs& args);

// Whether the sizes and leading dimensions fit the libraries' 32-bit int arguments.
bool fits_int32(const BlasGemm& call);

}  // namespace porta::detail::gpu
