#pragma once
// The input and output transforms of Winograd F(4x4, 3x3) (backends/cpu/ops/conv2d_winograd.cpp),
// 16 channels at a time: B^T d B of a tile's 6x6 input window, and A^T m A of its 6x6 products
// back to 4x4 outputs. They are most of a layer's arithmetic outside the GEMMs, so they are
// compiled per instruction set (vector_kernels.inc).
#include <algorithm>
#include <array>
#include <cstdint>

#include "backends/cpu/kernels/lanes16.hpp"

namespace porta::detail {

inline constexpr int winograd_out_tile = 4, winograd_in_tile = 6, winograd_points = 36;

// `pixel`: the window's 36 input pixels, row by row, each at its first channel, null in the
// padding. Writes channel c of point xi's transform to v[xi * point_stride + c], c < channels.
using WinogradInputFn = void (*)(const float* const* pixel, std::int64_t channels, float* v, std::int64_t point_stride);
// `m`: the products of one tile, channel l of point xi at m[xi * point_stride + l]. Writes output
// pixel e (row by row) of channel l < channels to out[e * ld + l]. Reads and writes whole groups
// of 16 channels.
using WinogradOutputFn = void (*)(const float* m, std::int64_t point_stride, std::int64_t channels, float* out,
                                  std::int64_t ld);

// The 1-D transforms at the points 0, 1, -1, 2, -2 and infinity, x and y `xs` and `ys` apart:
// B^T (6 -> 6) and A^T (6 -> 4). G (3 -> 6), the filters' transform, is in conv2d_winograd.cpp.
template <class T>
[[gnu::always_inline]] inline void winograd_input_1d(const T* x, int xs, T* y, int ys) {
  const T x0 = x[0], x1 = x[xs], x2 = x[2 * xs], x3 = x[3 * xs], x4 = x[4 * xs], x5 = x[5 * xs];
  y[0] = 4.0f * x0 - 5.0f * x2 + x4;
  y[ys] = x3 + x4 - 4.0f * (x1 + x2);
  y[2 * ys] = x4 - x3 + 4.0f * (x1 - x2);
  y[3 * ys] = x4 - x2 + 2.0f * (x3 - x1);
  y[4 * ys] = x4 - x2 + 2.0f * (x1 - x3);
  y[5 * ys] = 4.0f * x1 - 5.0f * x3 + x5;
}

template <class T>
[[gnu::always_inline]] inline void winograd_output_1d(const T* x, int xs, T* y, int ys) {
  const T sum12 = x[xs] + x[2 * xs], diff12 = x[xs] - x[2 * xs];
  const T sum34 = x[3 * xs] + x[4 * xs], diff34 = x[3 * xs] - x[4 * xs];
  y[0] = x[0] + sum12 + sum34;
  y[ys] = diff12 + 2.0f * diff34;
  y[2 * ys] = sum12 + 4.0f * sum34;
  y[3 * ys] = diff12 + 8.0f * diff34 + x[5 * xs];
}

// Out = T In T^T for the 1-D transform T of In -> Out values: columns, then rows.
template <int In, int Out, class T, class Transform>
[[gnu::always_inline]] inline void winograd_2d(const T* in, T* out, Transform transform) {
  std::array<T, Out * In> half;
  for (int j = 0; j < In; ++j) transform(in + j, In, half.data() + j, In);
  for (int i = 0; i < Out; ++i) transform(half.data() + i * In, 1, out + i * Out, 1);
}

[[gnu::always_inline]] inline void winograd_input_body(const float* const* pixel, std::int64_t channels, float* v,
                                                       std::int64_t point_stride) {
  for (std::int64_t c = 0; c < channels; c += lanes16) {
    const auto bytes = static_cast<std::size_t>(std::min(lanes16, channels - c)) * sizeof(float);
    std::array<Lanes16, winograd_points> window, transformed;
    for (int e = 0; e < winograd_points; ++e) {
      // Each lane group zeroed or loaded on its own: zeroing the whole window first (one rep
      // stos) and then overwriting it stalled every load behind the pending stores.
      Lanes16 value{};
      if (pixel[e] != nullptr && bytes == sizeof value) {
        load_vector<lanes16>(value, pixel[e] + c);
      } else if (pixel[e] != nullptr) {
        __builtin_memcpy(&value, pixel[e] + c, bytes);
      }
      window[e] = value;
    }
    winograd_2d<winograd_in_tile, winograd_in_tile>(window.data(), transformed.data(),
                                                    winograd_input_1d<Lanes16>);
    for (int xi = 0; xi < winograd_points; ++xi)
      store_vector<lanes16>(v + xi * point_stride + c, transformed[xi]);
  }
}

[[gnu::always_inline]] inline void winograd_output_body(const float* m, std::int64_t point_stride,
                                                        std::int64_t channels, float* out, std::int64_t ld) {
  for (std::int64_t l = 0; l < channels; l += lanes16) {
    std::array<Lanes16, winograd_points> sums;
    std::array<Lanes16, winograd_out_tile * winograd_out_tile> pixels;
    for (int xi = 0; xi < winograd_points; ++xi) load_vector<lanes16>(sums[xi], m + xi * point_stride + l);
    winograd_2d<winograd_in_tile, winograd_out_tile>(sums.data(), pixels.data(), winograd_output_1d<Lanes16>);
    for (int e = 0; e < winograd_out_tile * winograd_out_tile; ++e)
      store_vector<lanes16>(out + e * ld + l, pixels[e]);
  }
}

}  // namespace porta::detail
