// Goto/BLIS shape: C is cut into cache tiles, each tile's slices of A and B are packed into
// panels, and a register-tiled micro-kernel multiplies one A panel by one B panel. The portable
// micro-kernel below is written for auto-vectorisation; SIMD micro-kernels chosen by CPUID at run
// time replace it later without changing the blocking.
#include "backends/cpu/kernels/gemm_f32.hpp"

#include <algorithm>
#include <vector>

#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>

namespace porta::detail {
namespace {

// Register tile: mr x nr accumulators (12 AVX2 or 6 AVX-512 registers).
constexpr std::int64_t mr = 6;
constexpr std::int64_t nr = 16;
// Cache tiles. They are constants, never derived from the thread count, because they fix the
// order in which each element of C is summed.
constexpr std::int64_t mc = 96;   // rows of a C tile; its A panels stay in L2
constexpr std::int64_t nc = 256;  // columns of a C tile
constexpr std::int64_t kc = 256;  // depth of one packed slice; one B panel stays in L1

constexpr std::int64_t round_up(std::int64_t x, std::int64_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

// Packs op(A)[row0 : row0 + rows, p0 : p0 + depth] into panels of mr rows, k-major inside a
// panel, zero-padding the last panel so the micro-kernel never needs an edge case.
void pack_a(const float* a, std::int64_t lda, bool trans, std::int64_t row0, std::int64_t rows,
            std::int64_t p0, std::int64_t depth, float* dst) {
  for (std::int64_t i0 = 0; i0 < rows; i0 += mr, dst += mr * depth) {
    const std::int64_t panel_rows = std::min(mr, rows - i0);
    for (std::int64_t p = 0; p < depth; ++p) {
      float* d = dst + p * mr;
      for (std::int64_t i = 0; i < panel_rows; ++i) {
        const std::int64_t row = row0 + i0 + i, col = p0 + p;
        d[i] = trans ? a[col * lda + row] : a[row * lda + col];
      }
      std::fill(d + panel_rows, d + mr, 0.0f);
    }
  }
}

// Packs op(B)[p0 : p0 + depth, col0 : col0 + cols] into panels of nr columns, likewise.
void pack_b(const float* b, std::int64_t ldb, bool trans, std::int64_t p0, std::int64_t depth,
            std::int64_t col0, std::int64_t cols, float* dst) {
  for (std::int64_t j0 = 0; j0 < cols; j0 += nr, dst += nr * depth) {
    const std::int64_t panel_cols = std::min(nr, cols - j0);
    for (std::int64_t p = 0; p < depth; ++p) {
      float* d = dst + p * nr;
      for (std::int64_t j = 0; j < panel_cols; ++j) {
        const std::int64_t row = p0 + p, col = col0 + j0 + j;
        d[j] = trans ? b[col * ldb + row] : b[row * ldb + col];
      }
      std::fill(d + panel_cols, d + nr, 0.0f);
    }
  }
}

// The rows x cols corner of C gets (or, with `accumulate`, gains) one A panel times one B panel.
void micro_kernel(std::int64_t depth, const float* a, const float* b, float* c, std::int64_t ldc,
                  std::int64_t rows, std::int64_t cols, bool accumulate) {
  float acc[mr][nr] = {};
  for (std::int64_t p = 0; p < depth; ++p, a += mr, b += nr) {
    // Unrolling the rows first keeps -O3 from vectorising across them and spilling acc.
#pragma GCC unroll 16
    for (std::int64_t i = 0; i < mr; ++i) {
      for (std::int64_t j = 0; j < nr; ++j) acc[i][j] += a[i] * b[j];
    }
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    float* c_row = c + i * ldc;
    if (accumulate) {
      for (std::int64_t j = 0; j < cols; ++j) c_row[j] += acc[i][j];
    } else {
      for (std::int64_t j = 0; j < cols; ++j) c_row[j] = acc[i][j];
    }
  }
}

}  // namespace

void gemm_f32(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
              bool trans_a, const float* b, std::int64_t ldb, bool trans_b, float* c,
              std::int64_t ldc, const GemmEpilogue& epilogue) {
  if (m <= 0 || n <= 0) return;
  const std::int64_t row_tiles = (m + mc - 1) / mc;
  const std::int64_t col_tiles = (n + nc - 1) / nc;
  const auto tiles = tbb::blocked_range2d<std::int64_t>(0, row_tiles, 0, col_tiles);
  tbb::parallel_for(tiles, [&](const tbb::blocked_range2d<std::int64_t>& range) {
    std::vector<float> a_panels(round_up(std::min(mc, m), mr) * std::min(kc, k));
    std::vector<float> b_panels(round_up(std::min(nc, n), nr) * std::min(kc, k));
    for (std::int64_t ti = range.rows().begin(); ti != range.rows().end(); ++ti) {
      for (std::int64_t tj = range.cols().begin(); tj != range.cols().end(); ++tj) {
        const GemmTile tile{.row = ti * mc, .col = tj * nc, .rows = std::min(mc, m - ti * mc),
                            .cols = std::min(nc, n - tj * nc)};
        if (k <= 0) {
          for (std::int64_t i = 0; i < tile.rows; ++i) {
            std::fill_n(c + (tile.row + i) * ldc + tile.col, tile.cols, 0.0f);
          }
        }
        for (std::int64_t p0 = 0; p0 < k; p0 += kc) {
          const std::int64_t depth = std::min(kc, k - p0);
          pack_a(a, lda, trans_a, tile.row, tile.rows, p0, depth, a_panels.data());
          pack_b(b, ldb, trans_b, p0, depth, tile.col, tile.cols, b_panels.data());
          for (std::int64_t j = 0; j < tile.cols; j += nr) {
            for (std::int64_t i = 0; i < tile.rows; i += mr) {
              micro_kernel(depth, a_panels.data() + i * depth, b_panels.data() + j * depth,
                           c + (tile.row + i) * ldc + tile.col + j, ldc,
                           std::min(mr, tile.rows - i), std::min(nr, tile.cols - j), p0 > 0);
            }
          }
        }
        if (epilogue) epilogue(tile);
      }
    }
  });
}

}  // namespace porta::detail
