// Attention flash-style: a block per tile of attention_queries query rows of one (batch, head), a
// thread per row. The block stages tiles of attention_keys keys (k and v rows) in shared memory;
// each thread folds them into its row's online softmax (running max and sum, the partial output
// rescaled as the max grows), so no score leaves registers and k and v are read once per tile.
#include "backends/common/online_softmax.h"
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

constexpr int attention_queries = 64;  // threads per block: a multiple of every warp and wavefront size
constexpr int attention_keys = 32;
constexpr int max_dim = static_cast<int>(gpu::attention_max_head_dim);

__device__ std::int64_t smaller(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

// Query tile `tile` (of all problems' tiles), every thread of the block taking part.
template <DType T> __device__ void attention_tile(const gpu::AttentionArgs& args, std::int64_t tile) {
  __shared__ float k_tile[attention_keys][max_dim];
  __shared__ float v_tile[attention_keys][max_dim];
  const std::int64_t tiles = (args.queries + attention_queries - 1) / attention_queries;
  const std::int64_t bh = tile / tiles, first = tile % tiles * attention_queries;
  const std::int64_t i = first + threadIdx.x;
  const bool active = i < args.queries;
  float q[max_dim], out[max_dim];
  for (std::int64_t c = 0; c < args.depth; ++c)
    q[c] = active ? load<T>(args.q, (bh * args.queries + i) * args.depth + c) * args.scale : 0.0f;
  for (std::int64_t c = 0; c < args.width; ++c) out[c] = 0.0f;
  float top = -INFINITY, sum = 0.0f;
  const std::int64_t last = smaller(first + attention_queries, args.queries) - 1;
  const std::int64_t seen = args.causal ? smaller(args.keys, last + 1) : args.keys;  // keys any row of the tile sees
  const std::int64_t visible = args.causal ? smaller(args.keys, i + 1) : args.keys;
  const std::int64_t mask_row = bh / args.heads * args.mask_stride[0] + bh % args.heads * args.mask_stride[1] +
                                i * args.mask_stride[2];
  for (std::int64_t j0 = 0; j0 < seen; j0 += attention_keys) {
    const std::int64_t keys = smaller(std::int64_t{attention_keys}, args.keys - j0);
    for (std::int64_t e = threadIdx.x; e < keys * args.depth; e += blockDim.x)
      k_tile[e / args.depth][e % args.depth] = load<T>(args.k, (bh * args.keys + j0) * args.depth + e);
    for (std::int64_t e = threadIdx.x; e < keys * args.width; e += blockDim.x)
      v_tile[e / args.width][e % args.width] = load<T>(args.v, (bh * args.keys + j0) * args.width + e);
    __syncthreads();
    for (std::int64_t j = 0; active && j < keys && j0 + j < visible; ++j) {
      float s = 0.0f;
      for (std::int64_t c = 0; c < args.depth; ++c) s += q[c] * k_tile[j][c];
      if (args.mask != nullptr) s += load<T>(args.mask, mask_row + (j0 + j) * args.mask_stride[3]);
      if (s == -INFINITY) continue;  // a hidden key weighs 0
      const float p = online_softmax_step(s, &top, &sum, out, args.width);
      for (std::int64_t c = 0; c < args.width; ++c) out[c] += p * v_tile[j][c];
    }
    __syncthreads();  // the tiles are overwritten next
  }
  if (!active) return;
  for (std::int64_t c = 0; c < args.width; ++c)
    store<T>(args.y, (bh * args.queries + i) * args.width + c, out[c] / sum);
}

template <DType T> __global__ void attention_kernel(gpu::AttentionArgs args) {
  const std::int64_t tiles = args.problems * ((args.queries + attention_queries - 1) / attention_queries);
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) attention_tile<T>(args, tile);
}

}  // namespace

void launch_attention(const gpu::AttentionArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  const std::int64_t tiles = args.problems * ((args.queries + attention_queries - 1) / attention_queries);
  if (tiles == 0 || args.width == 0) return;
  const auto blocks = static_cast<unsigned>(tiles < limits.max_grid[0] ? tiles : limits.max_grid[0]);
  with_dtype(args.dtype, [&](auto t) {
    gpu_launch(attention_kernel<decltype(t)::value>, dim3(blocks), dim3(attention_queries), stream, args);
  });
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
