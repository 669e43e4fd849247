#include "backends/gpu/plan/blas_call.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "porta/error.hpp"

namespace porta::detail::gpu {
namespace {

// An operand whose element (r, c) of the rows x cols matrix the library reads is at
// r * row_stride + c * col_stride.
BlasOperand blas_operand(std::int64_t row_stride, std::int64_t col_stride, std::int64_t rows, std::int64_t cols) {
  if (row_stride == 1 && col_stride >= rows) return {.transpose = false, .ld = std::max<std::int64_t>(col_stride, 1)};
  if (col_stride == 1 && row_stride >= cols) return {.transpose = true, .ld = std::max<std::int64_t>(row_stride, 1)};
  throw Error(ErrorCode::Internal, "blas_gemm: strides " + std::to_string(row_stride) + ", " + std::to_string(col_stride) +
                                       " of a " + std::to_string(rows) + "x" + std::to_string(cols) +
                                       " operand are not a BLAS layout");
}

}  // namespace

BlasGemm blas_gemm(const GemmArgs& args) {
  BlasGemm call;
  call.m = args.n;
  call.n = args.m;
  call.k = args.k;
  call.first = blas_operand(args.b_col, args.b_row, args.n, args.k);
  call.second = blas_operand(args.a_col, args.a_row, args.k, args.m);
  call.ld_y = std::max<std::int64_t>(args.n, 1);
  call.batch_count = args.batch_count;
  call.stride_y = args.m * args.n;
  if (args.batch_count > 1) {
    const BatchOffsets one = batch_offsets(args, 1);
    call.stride_first = one.b;
    call.stride_second = one.a;
    for (std::int64_t batch = 2; batch < args.batch_count && call.uniform_batches; ++batch) {
      const BatchOffsets o = batch_offsets(args, batch);
      call.uniform_batches = o.a == batch * one.a && o.b == batch * one.b;
    }
  }
  return call;
}

namespace {

BlasLayout stored(const BlasOperand& operand, std::int64_t rows, std::int64_t cols) {
  return operand.transpose ? BlasLayout{cols, rows, operand.ld} : BlasLayout{rows, cols, operand.ld};
}

}  // namespace

BlasLayout first_layout(const BlasGemm& call) { return stored(call.first, call.m, call.k); }
BlasLayout second_layout(const BlasGemm& call) { return stored(call.second, call.k, call.n); }
BlasLayout result_layout(const BlasGemm& call) { return {call.m, call.n, call.ld_y}; }

bool fits_int32(const BlasGemm& call) {
  constexpr std::int64_t most = std::numeric_limits<int>::max();
  return std::max({call.m, call.n, call.k, call.first.ld, call.second.ld, call.ld_y, call.batch_count}) <= most;
}

std::int64_t blas_alignment(const BlasGemm& call, std::int64_t element_bytes, std::int64_t tensor_alignment) {
  std::int64_t alignment = tensor_alignment;
  if (call.batch_count > 1)
    for (const std::int64_t stride : {call.stride_first, call.stride_second, call.stride_y})
      while (stride * element_bytes % alignment != 0) alignment /= 2;
  return alignment;
}

BlasEpilogue blas_epilogue(const GemmArgs& args) {
  BlasEpilogue e;
  if (args.has_c) {
    const bool one_batch = args.batch_count == 1;  // porta's C serves every batch, the library's one each
    e.bias = one_batch && args.c_row == 0 && args.c_col == 1 && args.beta == 1.0f;
    e.c_matrix = one_batch && !e.bias && args.c_row == args.n && args.c_col == 1;
    e.porta_addend = !e.bias && !e.c_matrix;
  }
  e.relu = args.activation == Activation::Relu && !e.porta_addend;
  e.porta_activation = e.relu ? Activation::None : args.activation;
  return e;
}

}  // namespace porta::detail::gpu
