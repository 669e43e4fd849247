// Portable micro-kernel for CPUs without AVX2: plain loops the compiler vectorises for the
// baseline instruction set (SSE2 on x86-64, NEON on AArch64). It computes too slowly for memory
// to hold it up, so a streamed A (ARead) reads as any in place.
#include <algorithm>

#include "backends/cpu/kernels/micro_kernel.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

constexpr std::int64_t mr = 6;
constexpr std::int64_t nr = 16;

// A is read by columns (element (i, p) at a[shift[t] + p * lda + i]) or by rows (at
// a[shift[t] + i * lda + p]). A B read in place may end within the panel: only its first `cols`
// columns are read then, each row copied into a zero-padded one.
template <bool columns>
void tile(std::int64_t depth, const float* a, std::int64_t lda, const Taps& taps, const float* b, float* c,
          std::int64_t ldc, int cols, bool accumulate, const TileEpilogue* epilogue) {
  const std::int64_t a_step = columns ? lda : 1, a_row = columns ? 1 : lda;
  float acc[mr][nr] = {};
  float b_row[nr] = {};
  const std::int64_t b_step = taps.b_step(nr);
  const bool b_ends_within = taps.b_ends_within(cols, nr);
  for (int t = 0; t < taps.count; ++t) {
    const float* a_p = a + taps.shift[t];
    const float* b_p = b + t * taps.b_stride;
    for (std::int64_t p = 0; p < depth; ++p, a_p += a_step, b_p += b_step) {
      const float* b_j = b_p;
      if (b_ends_within) {
        std::copy_n(b_p, cols, b_row);
        b_j = b_row;
      }
      // Unrolling the rows first keeps -O3 from vectorising across them and spilling acc.
#pragma GCC unroll 16
      for (std::int64_t i = 0; i < mr; ++i) {
        for (std::int64_t j = 0; j < nr; ++j) acc[i][j] += a_p[i * a_row] * b_j[j];
      }
    }
  }
  for (std::int64_t i = 0; i < mr; ++i, c += ldc) {
    for (std::int64_t j = 0; j < cols; ++j) c[j] = accumulate ? c[j] + acc[i][j] : acc[i][j];
    if (!epilogue) continue;
    const float* residual = epilogue->residual ? epilogue->residual + i * epilogue->ld_residual : nullptr;
    for (std::int64_t j = 0; j < cols; ++j) {
      float v = c[j] + (epilogue->bias ? epilogue->bias[j] : 0.0f);
      if (residual) v += residual[j];
      c[j] = activate(epilogue->activation, v);
    }
  }
}

// `tiles` tiles of consecutive rows (MicroKernelFn).
template <bool columns>
void kernel(const MicroKernelArgs& call) {
  TileEpilogue rows = call.epilogue ? *call.epilogue : TileEpilogue{};
  const float* a = call.a;
  float* c = call.c;
  for (std::int64_t t = 0; t < call.tiles; ++t, a += columns ? mr : mr * call.lda, c += mr * call.ldc) {
    tile<columns>(call.depth, a, call.lda, call.taps, call.b, c, call.ldc, call.cols, call.accumulate,
                  call.epilogue ? &rows : nullptr);
    if (rows.residual) rows.residual += mr * rows.ld_residual;
  }
}

// B read at a shift per step of k; only the tile's rows x cols corner is read and written.
void shifted_b(std::int64_t depth, const float* a, const float* b, const std::int64_t* shift, float* c,
               std::int64_t ldc, int rows, int cols, bool accumulate) {
  float acc[mr][nr] = {};
  for (std::int64_t p = 0; p < depth; ++p, a += mr) {
    const float* b_p = b + shift[p];
#pragma GCC unroll 16
    for (std::int64_t i = 0; i < mr; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) acc[i][j] += a[i] * b_p[j];
    }
  }
  for (std::int64_t i = 0; i < rows; ++i, c += ldc) {
    for (std::int64_t j = 0; j < cols; ++j) c[j] = accumulate ? c[j] + acc[i][j] : acc[i][j];
  }
}

}  // namespace

MicroKernel generic_micro_kernel() {
  return {.isa = "generic", .mr = mr, .nr = nr, .run_columns_a = kernel<true>, .run_rows_a = kernel<false>,
          .run_streamed_a = kernel<false>, .run_shifted_b = shifted_b};
}

}  // namespace porta::detail
