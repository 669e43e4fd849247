#pragma once
// The SIMT GEMM main loop shared by matmul/gemm and the implicit-GEMM convolution: the operands
// come from loader functors, so that convolution gathers its im2col matrix on the fly and both
// share one tuned loop. f32 accumulation for every storage dtype.
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/gemm_mma_tile.cuh"

namespace porta::detail::PORTA_GPU_NAMESPACE {

// 256 threads as a 16 x 16 grid; each thread owns a (TileM/16) x (TileN/16) block of outputs,
// strided by 16 so that neighbouring threads read neighbouring shared-memory words and write
// neighbouring output columns.
inline constexpr int gemm_threads = 256;
inline constexpr int gemm_lanes = 16;

// Computes the TileM x TileN tile at (row0, col0) of an m x n x k product and hands each result to
// store(i, j, acc). load_a(i, l) and load_b(l, j) are only called inside the matrices. a_along_k
// and b_along_n say which index is contiguous in memory, so that loads are coalesced.
template <int TileM, int TileN, int TileK, class LoadA, class LoadB, class Store>
__device__ void gemm_tile(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t row0, std::int64_t col0,
                          bool a_along_k, bool b_along_n, const LoadA& load_a, const LoadB& load_b,
                          const Store& store) {
  constexpr int per_m = TileM / gemm_lanes, per_n = TileN / gemm_lanes;
  constexpr int pad = 4;  // staggers the rows of a_tile across shared-memory banks
  __shared__ float a_tile[TileK][TileM + pad];
  __shared__ float b_tile[TileK][TileN];
  const int tx = static_cast<int>(threadIdx.x) % gemm_lanes, ty = static_cast<int>(threadIdx.x) / gemm_lanes;
  float acc[per_m][per_n] = {};

  for (std::int64_t k0 = 0; k0 < k; k0 += TileK) {
    for (int e = static_cast<int>(threadIdx.x); e < TileM * TileK; e += gemm_threads) {
      const int kk = a_along_k ? e % TileK : e / TileM;
      const int i = a_along_k ? e / TileK : e % TileM;
      const std::int64_t row = row0 + i, l = k0 + kk;
      a_tile[kk][i] = row < m && l < k ? load_a(row, l) : 0.0f;
    }
    for (int e = static_cast<int>(threadIdx.x); e < TileK * TileN; e += gemm_threads) {
      const int j = b_along_n ? e % TileN : e / TileK;
      const int kk = b_along_n ? e / TileN : e % TileK;
      const std::int64_t col = col0 + j, l = k0 + kk;
      b_tile[kk][j] = col < n && l < k ? load_b(l, col) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TileK; ++kk) {
      float a[per_m], b[per_n];
#pragma unroll
      for (int i = 0; i < per_m; ++i) a[i] = a_tile[kk][ty + i * gemm_lanes];
#pragma unroll
      for (int j = 0; j < per_n; ++j) b[j] = b_tile[kk][tx + j * gemm_lanes];
#pragma unroll
      for (int i = 0; i < per_m; ++i)
#pragma unroll
        for (int j = 0; j < per_n; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < per_m; ++i)
#pragma unroll
    for (int j = 0; j < per_n; ++j) {
      const std::int64_t row = row0 + ty + i * gemm_lanes, col = col0 + tx + j * gemm_lanes;
      if (row < m && col < n) store(row, col, acc[i][j]);
    }
}

// The block's tile at (row0, col0) with the kernel chosen by plan: SIMT for Large and Small, matrix
// units for Matrix (f16 and bf16, and f32 as tf32).
template <DType T, gpu::GemmTile Tile, class LoadA, class LoadB, class Store>
__device__ void gemm_block_tile(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t row0, std::int64_t col0,
                                bool a_along_k, bool b_along_n, const LoadA& load_a, const LoadB& load_b,
                                const Store& store) {
  constexpr gpu::GemmTileShape s = gpu::tile_shape(Tile);
  if constexpr (Tile == gpu::GemmTile::Matrix)
    gemm_mma_tile<T>(m, n, k, row0, col0, a_along_k, b_along_n, load_a, load_b, store);
  else
    gemm_tile<s.tile_m, s.tile_n, s.tile_k>(m, n, k, row0, col0, a_along_k, b_along_n, load_a, load_b, store);
}

// Calls f(std::integral_constant<gpu::GemmTile, tile>{}): the one place that turns plan's run-time
// tile choice into the compile-time tile of the kernels. The matrix tile exists for f16 and bf16,
// and for f32 (tf32) where compat has tf32 matrix units; plan chooses it only where it exists.
template <DType T, class F> void with_tile(gpu::GemmTile tile, F&& f) {
#if defined(PORTA_GPU_MMA_TF32)
  constexpr bool has_matrix_tile = true;
#else
  constexpr bool has_matrix_tile = T != DType::f32;
#endif
  if constexpr (has_matrix_tile) {
    if (tile == gpu::GemmTile::Matrix) return f(std::integral_constant<gpu::GemmTile, gpu::GemmTile::Matrix>{});
  }
  if (tile == gpu::GemmTile::Large)
    f(std::integral_constant<gpu::GemmTile, gpu::GemmTile::Large>{});
  else
    f(std::integral_constant<gpu::GemmTile, gpu::GemmTile::Small>{});
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
