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

// The stored column-major matrix behind an operand, as a library that describes layouts
// (cuBLASLt) takes it: rows x cols with leading dimension ld.
struct BlasLayout {
  std::int64_t rows = 0, cols = 0, ld = 1;
};
BlasLayout first_layout(const BlasGemm& call);   // op(first) is m x k
BlasLayout second_layout(const BlasGemm& call);  // op(second) is k x n
BlasLayout result_layout(const BlasGemm& call);  // m x n

// Whether the sizes and leading dimensions fit the libraries' 32-bit int arguments.
bool fits_int32(const BlasGemm& call);

// The alignment in bytes that every batch's operands keep, given tensors that start
// `tensor_alignment`-aligned: what a library that picks kernels by alignment (cuBLASLt) may assume.
std::int64_t blas_alignment(const BlasGemm& call, std::int64_t element_bytes, std::int64_t tensor_alignment);

// How much of Gemm's act(alpha op(A) op(B) + beta C) a library with fused epilogues (cuBLASLt)
// takes, in a product of one batch: C as its bias, a vector along its rows (C broadcast down
// porta's rows, [N] or [1, N], with beta 1), or as its own beta * C (C dense [M, N]); then ReLU,
// once C is taken (its GELU is the tanh form, and porta's Gelu the erf form). What it does not
// take runs in porta's epilogue kernel.
struct BlasEpilogue {
  bool bias = false;
  bool c_matrix = false;
  bool relu = false;
  bool porta_addend = false;                       // beta * C is left to porta
  Activation porta_activation = Activation::None;  // the activation left to porta
  bool porta_epilogue() const noexcept { return porta_addend || porta_activation != Activation::None; }
};
BlasEpilogue blas_epilogue(const GemmArgs& args);

}  // namespace porta::detail::gpu
