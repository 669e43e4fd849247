// MatMul and Gemm: the tiled GEMM (SIMT or matrix units, as plan chooses) over a broadcast batch,
// with Gemm's epilogue (alpha, beta C broadcast to [M, N], activation) fused into the store.
#include "backends/gpu/ops/gemm_tile.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

template <DType T, gpu::GemmTile Tile>
__global__ void __launch_bounds__(gemm_threads) gemm_kernel(gpu::GemmArgs args) {
  constexpr gpu::GemmTileShape shape = gpu::tile_shape(Tile);
  for (std::int64_t batch = blockIdx.z; batch < args.batch_count; batch += gridDim.z) {
    const gpu::BatchOffsets offsets = gpu::batch_offsets(args, batch);
    const std::int64_t a_offset = offsets.a, b_offset = offsets.b;
    const std::int64_t y_offset = batch * args.m * args.n;
    const auto load_a = [&](std::int64_t i, std::int64_t l) { return load<T>(args.a, a_offset + i * args.a_row + l * args.a_col); };
    const auto load_b = [&](std::int64_t l, std::int64_t j) { return load<T>(args.b, b_offset + l * args.b_row + j * args.b_col); };
    const auto store_y = [&](std::int64_t i, std::int64_t j, float acc) {
      float y = args.alpha * acc;
      if (args.has_c) y += args.beta * load<T>(args.c, i * args.c_row + j * args.c_col);
      store<T>(args.y, y_offset + i * args.n + j, activate(args.activation, y));
    };
    for (std::int64_t row0 = std::int64_t{blockIdx.y} * shape.tile_m; row0 < args.m; row0 += std::int64_t{gridDim.y} * shape.tile_m)
      for (std::int64_t col0 = std::int64_t{blockIdx.x} * shape.tile_n; col0 < args.n; col0 += std::int64_t{gridDim.x} * shape.tile_n)
        gemm_block_tile<T, Tile>(args.m, args.n, args.k, row0, col0, args.a_col == 1, args.b_col == 1, load_a, load_b,
                                 store_y);
  }
}

}  // namespace

void launch_gemm(const gpu::GemmArgs& args, const gpu::GemmPlan& plan, gpuStream_t stream) {
  if (plan.geometry.empty()) return;
  with_dtype(args.dtype, [&](auto t) {
    with_tile<decltype(t)::value>(plan.tile, [&](auto c) {
      gpu_launch(gemm_kernel<decltype(t)::value, decltype(c)::value>, grid_of(plan.geometry), block_of(plan.geometry),
                 stream, args);
    });
  });
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
