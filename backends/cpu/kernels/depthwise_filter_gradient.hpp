#pragma once
// One row of a depthwise convolution's filter gradient on NHWC activations, a block of channels:
//   acc[s * block + c] += sum over ow in [first[s], last[s]) of
//       x_row[(ow * stride + s * dilation - pad_left) * ld + c] * dy_row[ow * ld + c]
// for every tap s of one filter row and c < block (at most 64). A tap's sums stay in vector
// registers over the whole row, so x and dy are read from L1 and acc is written once per row.
// Each sum runs over ow in order, the same in the vector body and the scalar tail.
// Compiled per instruction set (vector_kernels.hpp), W its vector width.
#include <cstdint>

#include "backends/cpu/kernels/float_vector.hpp"

namespace porta::detail {

struct FilterGradientRow {
  const float* x_row;             // the input row filter row r reads, at the block's first channel
  const float* dy_row;            // the output row, at the block's first channel
  std::int64_t ld;                // floats between pixels (the channel count)
  std::int64_t block;             // channels in the block, at most 64
  std::int64_t taps;              // S
  const std::int64_t* first;      // [taps]: the first ow whose tap lands inside the row
  const std::int64_t* last;       // [taps]: one past the last
  std::int64_t stride, dilation, pad_left;
};

using FilterGradientRowFn = void (*)(const FilterGradientRow& row, float* acc);

// Tap s's sums for channels [c, c + vecs W) of the row.
template <int W, int vecs>
[[gnu::always_inline]] inline void filter_gradient_chunk(const float* x0, std::int64_t step, const float* dy0,
                                                         std::int64_t ld, std::int64_t count, float* out) {
  using V = typename FloatVector<W>::type;
  V sum[vecs] = {};
  for (std::int64_t i = 0; i < count; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < vecs; ++v) {
      V a, b;
      __builtin_memcpy(&a, x0 + i * step + v * W, sizeof(V));
      __builtin_memcpy(&b, dy0 + i * ld + v * W, sizeof(V));
      sum[v] = sum[v] + a * b;
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < vecs; ++v) {
    V o;
    __builtin_memcpy(&o, out + v * W, sizeof(V));
    o = o + sum[v];
    __builtin_memcpy(out + v * W, &o, sizeof(V));
  }
}

template <int W>
[[gnu::always_inline]] inline void filter_gradient_row_body(const FilterGradientRow& row, float* acc) {
  constexpr int vecs = 64 / W < 4 ? 64 / W : 4;  // four independent sums hide the FMA latency
  for (std::int64_t s = 0; s < row.taps; ++s) {
    const std::int64_t step = row.stride * row.ld, begin = row.first[s], count = row.last[s] - begin;
    if (count <= 0) continue;
    const float* x0 = row.x_row + (begin * row.stride + s * row.dilation - row.pad_left) * row.ld;
    const float* dy0 = row.dy_row + begin * row.ld;
    float* out = acc + s * row.block;
    std::int64_t c = 0;
    for (; c + vecs * W <= row.block; c += vecs * W)
      filter_gradient_chunk<W, vecs>(x0 + c, step, dy0 + c, row.ld, count, out + c);
    for (; c + W <= row.block; c += W) filter_gradient_chunk<W, 1>(x0 + c, step, dy0 + c, row.ld, count, out + c);
    for (; c < row.block; ++c) {
      float sum = 0.0f;
      for (std::int64_t i = 0; i < count; ++i) sum = sum + x0[i * step + c] * dy0[i * row.ld + c];
      out[c] += sum;
    }
  }
}

}  // namespace porta::detail
