// Conv2d: an implicit GEMM per group (filters x output pixels, reduced over C/groups*R*S) that
// gathers its im2col operand on the fly and fuses bias, residual and activation into the store; and a direct
// kernel for depthwise convolution, where each output reads a single input channel. Both index in
// 32 bits (gpu::conv_index_limit) and decompose indices by the layer's sizes with FastDivisor, so
// that no division runs in the inner loops.
#include "backends/gpu/ops/gemm_tile.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

// The layer's sizes as 32-bit values, read once per thread.
struct ConvSizes {
  int c, h, w, k, s, p, q, rs, pq, stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w;
  __device__ explicit ConvSizes(const gpu::ConvArgs& a)
      : c(int(a.c)), h(int(a.h)), w(int(a.w)), k(int(a.k)), s(int(a.s)), p(int(a.p)), q(int(a.q)),
        rs(int(a.r * a.s)), pq(int(a.p * a.q)), stride_h(int(a.stride_h)), stride_w(int(a.stride_w)),
        pad_top(int(a.pad_top)), pad_left(int(a.pad_left)), dilation_h(int(a.dilation_h)),
        dilation_w(int(a.dilation_w)) {}
};

// x's element for filter tap `tap` (r * S + s) of channel `channel` under output pixel (oh, ow) of
// `image`, or 0 in the padding.
template <DType T>
__device__ float conv_input(const gpu::ConvArgs& a, const ConvSizes& z, int image, int channel, int tap, int oh,
                           int ow) {
  const int r = int(a.div_s.div(unsigned(tap))), s = tap - r * z.s;
  const int h = oh * z.stride_h - z.pad_top + r * z.dilation_h, w = ow * z.stride_w - z.pad_left + s * z.dilation_w;
  if (unsigned(h) >= unsigned(z.h) || unsigned(w) >= unsigned(z.w)) return 0.0f;  // zero padding
  return load<T>(a.x, ((image * z.c + channel) * z.h + h) * z.w + w);
}

template <DType T, gpu::GemmTile Tile>
__global__ void __launch_bounds__(gemm_threads) conv2d_kernel(gpu::ConvArgs a) {
  constexpr gpu::GemmTileShape shape = gpu::tile_shape(Tile);
  const ConvSizes z(a);
  const int m = int(a.k_per_group), n = int(a.n) * z.pq, k = int(a.c_per_group) * z.rs;
  for (int group = int(blockIdx.z); group < int(a.groups); group += int(gridDim.z)) {
    const int first_filter = group * m, first_channel = group * int(a.c_per_group);
    const auto load_w = [&](std::int64_t i, std::int64_t l) {
      return load<T>(a.weights, (first_filter + int(i)) * k + int(l));
    };
    const auto load_x = [&](std::int64_t l, std::int64_t j) {
      const int c = int(a.div_rs.div(unsigned(l))), image = int(a.div_pq.div(unsigned(j)));
      const int pixel = int(j) - image * z.pq, oh = int(a.div_q.div(unsigned(pixel)));
      return conv_input<T>(a, z, image, first_channel + c, int(l) - c * z.rs, oh, pixel - oh * z.q);
    };
    const auto store_y = [&](std::int64_t i, std::int64_t j, float acc) {
      const int filter = first_filter + int(i), image = int(a.div_pq.div(unsigned(j)));
      const int index = (image * z.k + filter) * z.pq + (int(j) - image * z.pq);
      if (a.bias != nullptr) acc += load<T>(a.bias, filter);
      if (a.residual != nullptr) acc += load<T>(a.residual, index);
      store<T>(a.y, index, activate(a.activation, acc));
    };
    for (std::int64_t row0 = std::int64_t{blockIdx.y} * shape.tile_m; row0 < m; row0 += std::int64_t{gridDim.y} * shape.tile_m)
      for (std::int64_t col0 = std::int64_t{blockIdx.x} * shape.tile_n; col0 < n; col0 += std::int64_t{gridDim.x} * shape.tile_n)
        gemm_block_tile<T, Tile>(m, n, k, row0, col0, true, true, load_w, load_x, store_y);
  }
}

template <DType T> __global__ void depthwise_conv2d_kernel(gpu::ConvArgs a) {
  const ConvSizes z(a);
  const int count = int(a.n) * z.k * z.pq, r = int(a.r);
  for (std::int64_t i = first_thread(); i < count; i += thread_count()) {
    const unsigned rows = a.div_q.div(unsigned(i)), planes = a.div_p.div(rows), image = a.div_k.div(planes);
    const int ow = int(i) - int(rows) * z.q, oh = int(rows) - int(planes) * z.p;
    const int filter = int(planes) - int(image) * z.k;
    const int channel = int(a.div_k_per_group.div(unsigned(filter)));  // one input channel per group
    float sum = a.bias != nullptr ? load<T>(a.bias, filter) : 0.0f;
    for (int tap = 0; tap < r * z.s; ++tap)
      sum = fmaf(conv_input<T>(a, z, int(image), channel, tap, oh, ow), load<T>(a.weights, filter * z.rs + tap), sum);
    if (a.residual != nullptr) sum += load<T>(a.residual, int(i));
    store<T>(a.y, int(i), activate(a.activation, sum));
  }
}

}  // namespace

void launch_conv2d(const gpu::ConvArgs& args, const gpu::ConvPlan& plan, gpuStream_t stream) {
  const gpu::LaunchGeometry& g = plan.gemm.geometry;
  if (g.empty()) return;
  with_dtype(args.dtype, [&](auto t) {
    constexpr DType T = decltype(t)::value;
    if (plan.depthwise) return gpu_launch(depthwise_conv2d_kernel<T>, grid_of(g), block_of(g), stream, args);
    with_tile<T>(plan.gemm.tile, [&](auto c) {
      gpu_launch(conv2d_kernel<T, decltype(c)::value>, grid_of(g), block_of(g), stream, args);
    });
  });
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
