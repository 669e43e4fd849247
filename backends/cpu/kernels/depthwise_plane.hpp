#pragma once
// A run of one depthwise convolution's output plane over a zero-padded copy of its input plane:
//   y[j] = sum over r < taps_h, s < taps_w of filter[r * taps_w + s] * x[row_shift[r] + j * stride + s * dilation]
// for j in [0, count), where j runs over output rows laid end to end in the copy's geometry
// (backends/cpu/ops/conv2d.cpp), so a whole chunk of rows is one loop. Compiled per instruction
// set (vector_kernels.hpp), so that the compiler vectorises it across j with every tap's sum in a
// register until y[j] is stored.
#include <cstdint>

namespace porta::detail {

using DepthwisePlaneFn = void (*)(const float* filter, std::int64_t taps_h, std::int64_t taps_w,
                                  const std::int64_t* row_shift, const float* x, std::int64_t stride,
                                  std::int64_t dilation, float* y, std::int64_t count);

// `Taps` > 0 fixes a square filter's size and `Stride` > 0 the stride with dilation 1 at compile
// time, so the tap loops unroll inside a j loop the compiler vectorises, with one pointer per
// filter row; 0 reads them from the arguments.
template <int Taps, int Stride>
[[gnu::always_inline]] inline void depthwise_plane_body(const float* filter, std::int64_t taps_h, std::int64_t taps_w,
                                                        const std::int64_t* row_shift, const float* x,
                                                        std::int64_t stride, std::int64_t dilation,
                                                        float* __restrict y, std::int64_t count) {
  if constexpr (Taps > 0 && Stride > 0) {
    float tap[Taps * Taps];
    const float* row[Taps];
    for (int t = 0; t < Taps * Taps; ++t) tap[t] = filter[t];
    for (int r = 0; r < Taps; ++r) row[r] = x + row_shift[r];
    // The filter rows point into x, which y never overlaps: GCC vectorises without alias checks
    // (clang's own checks are cheap, and it warns on this pragma).
#if !defined(__clang__)
#pragma GCC ivdep
#endif
    for (std::int64_t j = 0; j < count; ++j) {
      float sum = 0.0f;
#pragma GCC unroll 7
      for (int r = 0; r < Taps; ++r)
#pragma GCC unroll 7
        for (int s = 0; s < Taps; ++s) sum += tap[r * Taps + s] * row[r][j * Stride + s];
      y[j] = sum;
    }
  } else {
    for (std::int64_t j = 0; j < count; ++j) y[j] = 0.0f;
    for (std::int64_t r = 0; r < taps_h; ++r)
      for (std::int64_t s = 0; s < taps_w; ++s) {
        const float f = filter[r * taps_w + s];
        const float* __restrict in = x + row_shift[r] + s * dilation;
        for (std::int64_t j = 0; j < count; ++j) y[j] += f * in[j * stride];
      }
  }
}

template <int Taps>
[[gnu::always_inline]] inline void depthwise_plane_strides(const float* filter, const std::int64_t* row_shift,
                                                           const float* x, std::int64_t stride, std::int64_t dilation,
                                                           float* y, std::int64_t count) {
  if (dilation == 1 && stride == 1)
    return depthwise_plane_body<Taps, 1>(filter, Taps, Taps, row_shift, x, stride, dilation, y, count);
  if (dilation == 1 && stride == 2)
    return depthwise_plane_body<Taps, 2>(filter, Taps, Taps, row_shift, x, stride, dilation, y, count);
  depthwise_plane_body<0, 0>(filter, Taps, Taps, row_shift, x, stride, dilation, y, count);
}

// Dispatches the square 3x3, 5x5 and 7x7 filters and strides 1 and 2 of MobileNets and
// EfficientNets to unrolled bodies. Always inlined: code outside the per-ISA function would be
// compiled for the baseline instruction set.
[[gnu::always_inline]] inline void depthwise_plane_any(const float* filter, std::int64_t taps_h, std::int64_t taps_w,
                                                       const std::int64_t* row_shift, const float* x,
                                                       std::int64_t stride, std::int64_t dilation, float* y,
                                                       std::int64_t count) {
  if (taps_h == taps_w) {
    switch (taps_w) {
      case 3: return depthwise_plane_strides<3>(filter, row_shift, x, stride, dilation, y, count);
      case 5: return depthwise_plane_strides<5>(filter, row_shift, x, stride, dilation, y, count);
      case 7: return depthwise_plane_strides<7>(filter, row_shift, x, stride, dilation, y, count);
      default: break;
    }
  }
  depthwise_plane_body<0, 0>(filter, taps_h, taps_w, row_shift, x, stride, dilation, y, count);
}

}  // namespace porta::detail
