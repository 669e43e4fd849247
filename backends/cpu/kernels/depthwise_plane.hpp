#pragma once
// A run of one depthwise convolution's output plane, over its input laid out so that every
// filter tap is one shift (see ShiftedSource in backends/cpu/ops/conv2d.cpp):
//   y[j] = sum over t < taps of filter[t] * x[shift[t] + j * stride],   j in [0, count).
// The body is written once and compiled per instruction set (depthwise_plane_<isa>.cpp, with
// target attributes), so the compiler vectorises it across j with every tap's sum in a register
// until y[j] is stored; CPUID picks the version at run time.
#include <cstdint>

namespace porta::detail {

using DepthwisePlaneFn = void (*)(const float* filter, const std::int64_t* shift, std::int64_t taps, const float* x,
                                  std::int64_t stride, float* y, std::int64_t count);

// The widest version this CPU runs; it follows the GEMM micro-kernel's choice (and PORTA_CPU_ISA).
DepthwisePlaneFn depthwise_plane();

DepthwisePlaneFn avx512_depthwise_plane();
DepthwisePlaneFn avx2_depthwise_plane();

// `Taps` > 0 fixes the tap count and `Stride` > 0 the stride at compile time, so the tap loop
// unrolls inside a j loop the compiler vectorises.
template <int Taps, int Stride>
[[gnu::always_inline]] inline void depthwise_plane_body(const float* filter, const std::int64_t* shift,
                                                        std::int64_t taps, const float* x, std::int64_t stride,
                                                        float* __restrict y, std::int64_t count) {
  if constexpr (Taps > 0 && Stride > 0) {
    float tap[Taps];
    const float* in[Taps];
    for (int t = 0; t < Taps; ++t) tap[t] = filter[t], in[t] = x + shift[t];
#pragma GCC ivdep
    for (std::int64_t j = 0; j < count; ++j) {
      float sum = 0.0f;
#pragma GCC unroll 49
      for (int t = 0; t < Taps; ++t) sum += tap[t] * in[t][j * Stride];
      y[j] = sum;
    }
  } else {
    for (std::int64_t j = 0; j < count; ++j) y[j] = 0.0f;
    for (std::int64_t t = 0; t < taps; ++t) {
      const float* __restrict in = x + shift[t];
      for (std::int64_t j = 0; j < count; ++j) y[j] += filter[t] * in[j * stride];
    }
  }
}

template <int Taps>
[[gnu::always_inline]] inline void depthwise_plane_strides(const float* filter, const std::int64_t* shift,
                                                           const float* x, std::int64_t stride, float* y,
                                                           std::int64_t count) {
  if (stride == 1) return depthwise_plane_body<Taps, 1>(filter, shift, Taps, x, stride, y, count);
  if (stride == 2) return depthwise_plane_body<Taps, 2>(filter, shift, Taps, x, stride, y, count);
  depthwise_plane_body<0, 0>(filter, shift, Taps, x, stride, y, count);
}

// Dispatches the square 3x3, 5x5 and 7x7 filters and strides 1 and 2 of MobileNets and
// EfficientNets to unrolled bodies. Always inlined: code outside the per-ISA function would be
// compiled for the baseline instruction set.
[[gnu::always_inline]] inline void depthwise_plane_any(const float* filter, const std::int64_t* shift,
                                                       std::int64_t taps, const float* x, std::int64_t stride,
                                                       float* y, std::int64_t count) {
  switch (taps) {
    case 9: return depthwise_plane_strides<9>(filter, shift, x, stride, y, count);
    case 25: return depthwise_plane_strides<25>(filter, shift, x, stride, y, count);
    case 49: return depthwise_plane_strides<49>(filter, shift, x, stride, y, count);
    default: return depthwise_plane_body<0, 0>(filter, shift, taps, x, stride, y, count);
  }
}

}  // namespace porta::detail
