#pragma once
// The SIMT GEMM main loop shared by matmul/gemm and the implicit-GEMM convolution: the operands
// come from loader functors, so that convolution gathers its im2col matrix on the fly and both
// share one tuned loop. f32 accumulation for every storage dtype.
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/gemm_mma_tile.cuh"

namespace porta::detail::PORTA_GPU_NAMESPACE {

// 256 threads as a 16 x 16 grid; each thread owns (TileM/64) x (TileN/64) blocks of 4 x 4 outputs,
// the blocks 64 rows and columns apart, so that each step reads its operands from shared memory
// in 16-byte vectors (shared4) and neighbouring threads read neighbouring vectors.
inline constexpr int gemm_threads = 256;
inline constexpr int gemm_lanes = 16;

// Computes the TileM x TileN tile at (row0, col0) of an m x n x k product and hands each result to
// store(i, j, acc). load_a(i, l) and load_b(l, j) are only called inside the matrices. a_along_k
// and b_along_n say which index is contiguous in memory, so that loads are coalesced. Two stages
// of shared memory: while the block multiplies one, each thread's loads of the next are in flight
// into registers, which it then stores into the other stage; one barrier per step.
template <int TileM, int TileN, int TileK, class LoadA, class LoadB, class Store>
__device__ void gemm_tile(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t row0, std::int64_t col0,
                          bool a_along_k, bool b_along_n, const LoadA& load_a, const LoadB& load_b,
                          const Store& store) {
  constexpr int groups_m = TileM / 64, groups_n = TileN / 64, per_m = 4 * groups_m, per_n = 4 * groups_n;
  constexpr int share_a = TileM * TileK / gemm_threads, share_b = TileK * TileN / gemm_threads;
  static_assert(TileM % 64 == 0 && TileN % 64 == 0 && share_a * gemm_threads == TileM * TileK &&
                share_b * gemm_threads == TileK * TileN);
  constexpr int pad = 4;  // staggers the rows of a_tile across shared-memory banks; keeps rows 16-byte aligned
  __shared__ __align__(16) float a_tile[2][TileK][TileM + pad];
  __shared__ __align__(16) float b_tile[2][TileK][TileN];
  static_assert(sizeof(a_tile) + sizeof(b_tile) == 8 * TileK * (TileM + pad + TileN));  // gpu::tile_shared_bytes
  const int tx = static_cast<int>(threadIdx.x) % gemm_lanes, ty = static_cast<int>(threadIdx.x) / gemm_lanes;
  float acc[per_m][per_n] = {};
  float a_next[share_a], b_next[share_b];

  // Element u of this thread's share of a step's A (i, kk) and B (kk, j) tiles.
  const auto a_at = [&](int u, int& i, int& kk) {
    const int e = static_cast<int>(threadIdx.x) + u * gemm_threads;
    kk = a_along_k ? e % TileK : e / TileM;
    i = a_along_k ? e / TileK : e % TileM;
  };
  const auto b_at = [&](int u, int& kk, int& j) {
    const int e = static_cast<int>(threadIdx.x) + u * gemm_threads;
    j = b_along_n ? e % TileN : e / TileK;
    kk = b_along_n ? e / TileN : e % TileK;
  };
  const auto fetch = [&](std::int64_t k0) {
#pragma unroll
    for (int u = 0; u < share_a; ++u) {
      int i, kk;
      a_at(u, i, kk);
      a_next[u] = row0 + i < m && k0 + kk < k ? load_a(row0 + i, k0 + kk) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < share_b; ++u) {
      int kk, j;
      b_at(u, kk, j);
      b_next[u] = col0 + j < n && k0 + kk < k ? load_b(k0 + kk, col0 + j) : 0.0f;
    }
  };
  const auto stash = [&](int stage) {
#pragma unroll
    for (int u = 0; u < share_a; ++u) {
      int i, kk;
      a_at(u, i, kk);
      a_tile[stage][kk][i] = a_next[u];
    }
#pragma unroll
    for (int u = 0; u < share_b; ++u) {
      int kk, j;
      b_at(u, kk, j);
      b_tile[stage][kk][j] = b_next[u];
    }
  };

  fetch(0);
  stash(0);
  __syncthreads();
  int stage = 0;
  for (std::int64_t k0 = 0; k0 < k; k0 += TileK) {
    const bool more = k0 + TileK < k;  // uniform over the block
    if (more) fetch(k0 + TileK);
#pragma unroll
    for (int kk = 0; kk < TileK; ++kk) {
      float a[per_m], b[per_n];
#pragma unroll
      for (int g = 0; g < groups_m; ++g) shared4(&a_tile[stage][kk][g * 64 + ty * 4], &a[g * 4]);
#pragma unroll
      for (int g = 0; g < groups_n; ++g) shared4(&b_tile[stage][kk][g * 64 + tx * 4], &b[g * 4]);
#pragma unroll
      for (int i = 0; i < per_m; ++i)
#pragma unroll
        for (int j = 0; j < per_n; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (more) stash(stage ^ 1);  // the other stage's readers passed the previous barrier
    __syncthreads();
    stage ^= 1;
  }

#pragma unroll
  for (int i = 0; i < per_m; ++i)
#pragma unroll
    for (int j = 0; j < per_n; ++j) {
      const std::int64_t row = row0 + i / 4 * 64 + ty * 4 + i % 4, col = col0 + j / 4 * 64 + tx * 4 + j % 4;
      if (row < m && col < n) store(row, col, acc[i][j]);
    }
}

// The block's tile at (row0, col0) with the kernel chosen by plan: SIMT for Large, Wide and Small,
// matrix units for Matrix and MatrixWide (f16 and bf16, and f32 as tf32).
template <DType T, gpu::GemmTile Tile, class LoadA, class LoadB, class Store>
__device__ void gemm_block_tile(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t row0, std::int64_t col0,
                                bool a_along_k, bool b_along_n, const LoadA& load_a, const LoadB& load_b,
                                const Store& store) {
  constexpr gpu::GemmTileShape s = gpu::tile_shape(Tile);
  if constexpr (gpu::is_matrix(Tile))
    gemm_mma_tile<T, Tile>(m, n, k, row0, col0, a_along_k, b_along_n, load_a, load_b, store);
  else
    gemm_tile<s.tile_m, s.tile_n, s.tile_k>(m, n, k, row0, col0, a_along_k, b_along_n, load_a, load_b, store);
}

// Calls f(std::integral_constant<gpu::GemmTile, tile>{}): the one place that turns plan's run-time
// tile choice into the compile-time tile of the kernels. The matrix tiles exist for f16 and bf16,
// and for f32 (tf32) where compat has tf32 matrix units; plan chooses them only where they exist.
template <DType T, class F> void with_tile(gpu::GemmTile tile, F&& f) {
#if defined(PORTA_GPU_MMA_TF32)
  constexpr bool has_matrix_tile = true;
#else
  constexpr bool has_matrix_tile = T != DType::f32;
#endif
  using gpu::GemmTile;
  if constexpr (has_matrix_tile) {
    if (tile == GemmTile::Matrix) return f(std::integral_constant<GemmTile, GemmTile::Matrix>{});
    if (tile == GemmTile::MatrixWide) return f(std::integral_constant<GemmTile, GemmTile::MatrixWide>{});
  }
  if (tile == GemmTile::Large) return f(std::integral_constant<GemmTile, GemmTile::Large>{});
  if (tile == GemmTile::Wide) return f(std::integral_constant<GemmTile, GemmTile::Wide>{});
  f(std::integral_constant<GemmTile, GemmTile::Small>{});
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
