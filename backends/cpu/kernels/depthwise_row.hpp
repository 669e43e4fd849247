#pragma once
// One filter row of a depthwise convolution added into one output row:
//   y[ow] += sum over s < taps of filter[s] * x[ow * stride + offset + s * dilation],
// taps whose input column falls outside [0, width) adding nothing (padding). The body is written
// once and compiled per instruction set (depthwise_row_<isa>.cpp, with target attributes), so
// the compiler vectorises it across output columns as wide as the CPU allows; CPUID picks the
// version at run time.
#include <algorithm>
#include <cstdint>

namespace porta::detail {

using DepthwiseRowFn = void (*)(const float* filter, std::int64_t taps, const float* x, std::int64_t stride,
                                std::int64_t dilation, std::int64_t offset, std::int64_t width, float* y,
                                std::int64_t columns);

// The widest version this CPU runs; it follows the GEMM micro-kernel's choice (and PORTA_CPU_ISA).
DepthwiseRowFn depthwise_row();

DepthwiseRowFn avx512_depthwise_row();
DepthwiseRowFn avx2_depthwise_row();

// Output column `ow` tap by tap, skipping taps in the padding.
[[gnu::always_inline]] inline void depthwise_column_clipped(const float* filter, std::int64_t taps, const float* x,
                                                            std::int64_t stride, std::int64_t dilation,
                                                            std::int64_t offset, std::int64_t width, float* y,
                                                            std::int64_t ow) {
  for (std::int64_t s = 0; s < taps; ++s) {
    const std::int64_t iw = ow * stride + offset + s * dilation;
    if (iw >= 0 && iw < width) y[ow] += filter[s] * x[iw];
  }
}

// `Taps` > 0 fixes the filter width, and `Stride` > 0 the stride with dilation 1, at compile
// time, so the tap loop unrolls inside a column loop the compiler can vectorise (it does not
// with a run-time stride); 0 reads them from the arguments.
template <int Taps, int Stride>
[[gnu::always_inline]] inline void depthwise_row_body(const float* __restrict filter, std::int64_t taps,
                                                      const float* __restrict x, std::int64_t stride,
                                                      std::int64_t dilation, std::int64_t offset, std::int64_t width,
                                                      float* __restrict y, std::int64_t columns) {
  if constexpr (Stride > 0) stride = Stride, dilation = 1;
  const std::int64_t n = Taps > 0 ? Taps : taps;
  const std::int64_t span = (n - 1) * dilation;
  // Columns [first, last) read only inside the row; the ones around them go tap by tap.
  const std::int64_t first = std::min(columns, offset >= 0 ? 0 : (-offset + stride - 1) / stride);
  const std::int64_t reach = width - 1 - span - offset;
  const std::int64_t last = std::clamp(reach < 0 ? 0 : reach / stride + 1, first, columns);
  for (std::int64_t ow = 0; ow < first; ++ow)
    depthwise_column_clipped(filter, n, x, stride, dilation, offset, width, y, ow);
  for (std::int64_t ow = last; ow < columns; ++ow)
    depthwise_column_clipped(filter, n, x, stride, dilation, offset, width, y, ow);
  if constexpr (Taps > 0) {
    // Taps in registers and one pass over y per tap keep the column loop simple enough for the
    // vectoriser at full width.
    float tap[Taps];
    for (int s = 0; s < Taps; ++s) tap[s] = filter[s];
    const float* __restrict base = x + offset + first * stride;
    float* __restrict out = y + first;
    const std::int64_t count = last - first;
#pragma GCC unroll 8
    for (int s = 0; s < Taps; ++s) {
      const float* __restrict in = base + s * dilation;
      for (std::int64_t i = 0; i < count; ++i) out[i] += tap[s] * in[i * stride];
    }
  } else {
    for (std::int64_t ow = first; ow < last; ++ow) {
      for (std::int64_t s = 0; s < n; ++s) y[ow] += filter[s] * x[ow * stride + offset + s * dilation];
    }
  }
}

template <int Taps>
[[gnu::always_inline]] inline void depthwise_row_strides(const float* filter, const float* x, std::int64_t stride,
                                                         std::int64_t dilation, std::int64_t offset,
                                                         std::int64_t width, float* y, std::int64_t columns) {
  if (dilation == 1 && stride == 1)
    return depthwise_row_body<Taps, 1>(filter, Taps, x, stride, dilation, offset, width, y, columns);
  if (dilation == 1 && stride == 2)
    return depthwise_row_body<Taps, 2>(filter, Taps, x, stride, dilation, offset, width, y, columns);
  depthwise_row_body<Taps, 0>(filter, Taps, x, stride, dilation, offset, width, y, columns);
}

// Dispatches the common filter widths and strides (those of MobileNets and EfficientNets) to
// unrolled bodies. Everything here is always inlined (no lambdas): code outside the per-ISA
// function would be compiled for the baseline instruction set.
[[gnu::always_inline]] inline void depthwise_row_any(const float* filter, std::int64_t taps, const float* x,
                                                     std::int64_t stride, std::int64_t dilation, std::int64_t offset,
                                                     std::int64_t width, float* y, std::int64_t columns) {
  switch (taps) {
    case 3: return depthwise_row_strides<3>(filter, x, stride, dilation, offset, width, y, columns);
    case 5: return depthwise_row_strides<5>(filter, x, stride, dilation, offset, width, y, columns);
    case 7: return depthwise_row_strides<7>(filter, x, stride, dilation, offset, width, y, columns);
    default: return depthwise_row_body<0, 0>(filter, taps, x, stride, dilation, offset, width, y, columns);
  }
}

}  // namespace porta::detail
