#pragma once
// The matrix-unit GEMM main loop for f16 and bf16, and for f32 as tf32 where compat has it
// (PORTA_GPU_MMA_TF32), always with f32 accumulation; with the interface of gemm_tile (loader
// functors, a store functor), so that matmul/gemm and the implicit-GEMM convolution share it. The
// 16x16xK warp step is compat's gpu_mma_* (wmma on CUDA); nothing else here is vendor specific: a
// warp is gpu_mma_warp lanes (32 with NVIDIA's mma, 64 with AMD's MFMA).
#include "backends/gpu/ops/device_math.cuh"

namespace porta::detail::PORTA_GPU_NAMESPACE {

// The operands' element in shared memory: storage bits of f16 and bf16 (exact for values loaded
// from T), f32 rounded to tf32.
template <DType T> using mma_operand = std::conditional_t<T == DType::f32, float, unsigned short>;
template <DType T> __device__ inline mma_operand<T> to_mma_operand(float value) {
  if constexpr (T == DType::f32) return round_to_tf32(value);
  else if constexpr (T == DType::f16) return gpu_float_to_half_bits(value);
  else return float_to_bf16_bits(value);
}

// A 128 x 128 (Matrix) or 64 x 128 (MatrixWide) output tile per block of 256 threads, its warps
// laid out 4 across (NVIDIA: 8 warps as 2 x 4, each owning 64 x 32 outputs of the 128-row tile as
// 4 x 2 accumulator tiles; AMD: 4 wavefronts as 1 x 4);
// 32-deep stages of A and B in shared memory (for tf32, 47 KiB in all with the staging: within the
// 48 KiB of static shared memory), rows padded by 8 elements to spread them across banks while
// keeping every fragment 32-byte aligned. The accumulators pass through a per-warp shared staging
// tile to the store functor, which applies the epilogue.
template <DType T, gpu::GemmTile Tile, class LoadA, class LoadB, class Store>
__device__ void gemm_mma_tile(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t row0, std::int64_t col0,
                              bool a_along_k, bool b_along_n, const LoadA& load_a, const LoadB& load_b,
                              const Store& store) {
  constexpr gpu::GemmTileShape shape = gpu::tile_shape(Tile);
  constexpr int tile_m = shape.tile_m, tile_n = shape.tile_n, tile_k = shape.tile_k, threads = shape.threads;
  constexpr int warps = threads / gpu_mma_warp, warps_n = 4, warp_m = tile_m / (warps / warps_n), warp_n = tile_n / warps_n;
  constexpr int frags_m = warp_m / 16, frags_n = warp_n / 16, step_k = gpu_mma_k<T>;
  constexpr int lda = tile_k + 8, ldb = tile_n + 8, ld_stage = 16 + 4;
  static_assert(warps % warps_n == 0 && warp_m % 16 == 0 && warp_n % 16 == 0 && tile_k % step_k == 0);
  __shared__ __align__(32) mma_operand<T> a_tile[tile_m * lda];
  __shared__ __align__(32) mma_operand<T> b_tile[tile_k * ldb];
  __shared__ __align__(32) float stage[warps][16 * ld_stage];
  static_assert(sizeof(a_tile) + sizeof(b_tile) + sizeof(stage) <= 48 * 1024);  // static shared memory
  const int warp = static_cast<int>(threadIdx.x) / gpu_mma_warp, lane = static_cast<int>(threadIdx.x) % gpu_mma_warp;
  const int warp_row = warp / warps_n * warp_m, warp_col = warp % warps_n * warp_n;

  gpu_mma_accumulator<T> acc[frags_m][frags_n];
  for (int i = 0; i < frags_m; ++i)
    for (int j = 0; j < frags_n; ++j) gpu_mma_zero<T>(acc[i][j]);

  for (std::int64_t k0 = 0; k0 < k; k0 += tile_k) {
    for (int e = static_cast<int>(threadIdx.x); e < tile_m * tile_k; e += threads) {
      const int kk = a_along_k ? e % tile_k : e / tile_m;
      const int i = a_along_k ? e / tile_k : e % tile_m;
      const std::int64_t row = row0 + i, l = k0 + kk;
      a_tile[i * lda + kk] = to_mma_operand<T>(row < m && l < k ? load_a(row, l) : 0.0f);
    }
    for (int e = static_cast<int>(threadIdx.x); e < tile_k * tile_n; e += threads) {
      const int j = b_along_n ? e % tile_n : e / tile_k;
      const int kk = b_along_n ? e / tile_n : e % tile_k;
      const std::int64_t col = col0 + j, l = k0 + kk;
      b_tile[kk * ldb + j] = to_mma_operand<T>(col < n && l < k ? load_b(l, col) : 0.0f);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < tile_k; kk += step_k) {
      gpu_mma_a<T> a[frags_m];
      gpu_mma_b<T> b[frags_n];
#pragma unroll
      for (int i = 0; i < frags_m; ++i) gpu_mma_load_a<T>(a[i], &a_tile[(warp_row + i * 16) * lda + kk], lda);
#pragma unroll
      for (int j = 0; j < frags_n; ++j) gpu_mma_load_b<T>(b[j], &b_tile[kk * ldb + warp_col + j * 16], ldb);
#pragma unroll
      for (int i = 0; i < frags_m; ++i)
#pragma unroll
        for (int j = 0; j < frags_n; ++j) gpu_mma<T>(acc[i][j], a[i], b[j]);
    }
    __syncthreads();
  }

  for (int i = 0; i < frags_m; ++i)
    for (int j = 0; j < frags_n; ++j) {
      gpu_mma_store<T>(stage[warp], ld_stage, acc[i][j]);
      gpu_sync_warp();
      for (int e = lane; e < 16 * 16; e += gpu_mma_warp) {
        const std::int64_t row = row0 + warp_row + i * 16 + e / 16, col = col0 + warp_col + j * 16 + e % 16;
        if (row < m && col < n) store(row, col, stage[warp][e / 16 * ld_stage + e % 16]);
      }
      gpu_sync_warp();  // the next tile reuses the staging
    }
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
