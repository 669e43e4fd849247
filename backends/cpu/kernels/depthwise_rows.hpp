#pragma once
// A band of output rows of a depthwise convolution on NHWC activations, a range of channels:
//   y[(i * q + ow) * k + c] = sum over taps (r, s) inside the input of
//       taps[(r * taps_w + s) * k + c] * rows[i * taps_h + r][(ow * stride + s * dilation - pad_left) * k + c]
// where rows[i * taps_h + r] is the input row that filter row r of output row i reads, or null
// where it falls in the padding; then y = act(y + bias + residual) on each block's sums in
// registers, or while a chunk's row is in L1 (DepthwiseRows::finish; the caller passes no epilogue
// where it prefers one pass over the band).
// Channels are contiguous in both, so the sums of a chunk of channels stay in vector registers
// over every tap; a chunk runs over every row of the band before the next, so that the input
// lines it shares between rows come from L1 (or, with row_pairs, two rows at a time that load
// their shared input row once), except in pixel-major bands (depthwise_pixel_major_body).
// Compiled per instruction set (vector_kernels.hpp), in vectors of its width W, in blocks sized for
// its registers.
#include <algorithm>
#include <cstdint>

#include "backends/cpu/kernels/cache_sizes.hpp"
#include "backends/cpu/kernels/depthwise_finish.hpp"
#include "backends/cpu/kernels/epilogue.hpp"
#include "backends/cpu/kernels/float_vector.hpp"

namespace porta::detail {

struct DepthwiseRows {
  const float* taps;             // [taps_h * taps_w][k]
  std::int64_t k, taps_h, taps_w;
  const float* const* rows;      // [out_rows][taps_h]
  std::int64_t out_rows, q;      // y: out_rows rows of q pixels of k channels, one after another
  std::int64_t c_begin, c_end;   // the channels computed; c_begin a multiple of 64
  std::int64_t width, stride, dilation, pad_left;
  const float* bias;             // [k], or null
  const float* residual;         // laid out like y, or null
  // The residual's distance from y in bytes, so that a block finds the residual of its own output
  // (residual_at): given a copy of the band per row with the row's residual, GCC kept the index
  // arithmetic of the chunk-major kernels on the stack, and they ran 1.3-2x slower. An integer
  // round trip between two arrays, which GCC and Clang compile as a pointer that may point anywhere.
  std::uintptr_t residual_from_y;
  Activation act;
  // Input rows to fetch from memory while the band's first row (or pair) runs (the next band's,
  // in a layer that streams, whose bands are one row, or a pair at 3x3 /2), `ahead_count` of
  // them: each block asks for the lines under its own columns.
  const float* const* ahead;
  std::int64_t ahead_count;
  // Whether a 3x3 /2 band's rows, which share an input row, run two at a time and read it once
  // for both. For layers that stream from memory: 8x96x112x112 0.86 -> 1.02-1.05x oneDNN on 1
  // thread, where a row read its input from L2 at 74 GFLOP/s and a pair at 110. In cache, in
  // chunks of one vector, 8x240x28x28 ran 17 % slower.
  bool row_pairs;
  // Where the band's sums go (DepthwiseFinish): finished in registers, past the caches or not, for
  // an epilogue of act None, Relu or Relu6.
  DepthwiseFinish finish;
};

using DepthwiseRowsFn = void (*)(const DepthwiseRows& band, float* y);

// The vector registers of an instruction set with W-float vectors: 32 with AVX-512, 16 with AVX2
// and SSE2. A block's sums and taps must fit them, or GCC spills them (with blocks sized for
// AVX-512, AVX2 ran at a quarter of oneDNN's rate).
template <int W> inline constexpr int vector_registers = W == 16 ? 32 : 16;
// Whether a block of pixels x vecs sums, `taps` tap vectors per vector (the general block keeps
// one) and an input vector fits them.
template <int W> constexpr bool block_fits(int vecs, int pixels, int taps) {
  return vecs * (pixels + taps) + 1 <= vector_registers<W>;
}
// Whether 3x3 /2 rows can run in pairs (DepthwiseRows::row_pairs): pairs are blocks across, which
// run at stride 2 only with 32 registers (depthwise_vector_chunks); a pair's block of 8 pixels
// takes 2 x 8 sums, 2 x 3 taps and an input vector, 23 of them.
template <int W> inline constexpr bool depthwise_row_pairs = vector_registers<W> == 32;
// The vectors a chunk's blocks take: `most`, or fewer until a block of 4 pixels fits.
template <int W> constexpr int block_vecs(int most, int taps) {
  return most > 1 && !block_fits<W>(most, 4, taps) ? block_vecs<W>(most - 1, taps) : most;
}

// A block's sums, zeroed and stored (pixel p's at y + p * k) by unrolled loops: as loops, they
// kept the sums on the stack under AVX2 (the zeroing, a rep stos, took 15 % of a layer's time).
template <int W, int Pixels, int Vecs>
[[gnu::always_inline]] inline void clear_sums(typename FloatVector<W>::type (&sum)[Pixels][Vecs]) {
#pragma GCC unroll 8
  for (int p = 0; p < Pixels; ++p)
#pragma GCC unroll 4
    for (int v = 0; v < Vecs; ++v) sum[p][v] = typename FloatVector<W>::type{};
}
template <int W, int Pixels, int Vecs>
[[gnu::always_inline]] inline void store_sums(const typename FloatVector<W>::type (&sum)[Pixels][Vecs], float* y,
                                              std::int64_t k) {
#pragma GCC unroll 8
  for (int p = 0; p < Pixels; ++p)
#pragma GCC unroll 4
    for (int v = 0; v < Vecs; ++v) store_vector<W>(y + p * k + W * v, sum[p][v]);
}

// The residual of output element *y (a.residual non-null).
[[gnu::always_inline]] inline const float* residual_at(const DepthwiseRows& a, const float* y) {
  return reinterpret_cast<const float*>(reinterpret_cast<std::uintptr_t>(y) + a.residual_from_y);
}

// A block's sums (channels [c0, c0 + W * Vecs) of output columns [ow, ow + Pixels) of a row)
// finished in registers and stored, past the caches where Finish is `streamed`.
template <int W, DepthwiseFinish Finish, int Pixels, int Vecs>
[[gnu::always_inline]] inline void finish_sums(const DepthwiseRows& a,
                                               typename FloatVector<W>::type (&sum)[Pixels][Vecs], float* y,
                                               std::int64_t ow, std::int64_t c0) {
  using V = typename FloatVector<W>::type;
#pragma GCC unroll 8
  for (int p = 0; p < Pixels; ++p)
#pragma GCC unroll 4
    for (int v = 0; v < Vecs; ++v) {
      const std::int64_t at = (ow + p) * a.k + c0 + W * v;
      V& s = sum[p][v];
      V more;
      if (a.bias) {
        load_vector<W>(more, a.bias + c0 + W * v);
        s += more;
      }
      if (a.residual) {
        load_vector<W>(more, residual_at(a, y + at));
        s += more;
      }
      switch (a.act) {
        case Activation::Relu: s = s > 0.0f ? s : 0.0f; break;
        case Activation::Relu6: s = s < 0.0f ? 0.0f : (s > 6.0f ? 6.0f : s); break;  // as clip: NaN stays
        default: break;
      }
      if constexpr (Finish == DepthwiseFinish::streamed) {
        stream_vector(y + at, s);
      } else {
        store_vector<W>(y + at, s);
      }
    }
}

// Channels [c0, c0 + W * Vecs) of output columns [ow, ow + Pixels): every sum in a register
// over all taps, each tap's weights loaded once for the block. `Checked` skips taps that fall
// in the horizontal padding; unchecked blocks lie where none does. Finish other than `after`:
// finish_sums.
template <int W, int Vecs, int Pixels, bool Checked, DepthwiseFinish Finish = DepthwiseFinish::after>
[[gnu::always_inline]] inline void depthwise_block(const DepthwiseRows& a, const float* const* rows, std::int64_t ow,
                                                   std::int64_t c0, float* y) {
  using V = typename FloatVector<W>::type;
  V sum[Pixels][Vecs];
  clear_sums<W>(sum);
  for (std::int64_t r = 0; r < a.taps_h; ++r) {
    const float* row = rows[r];
    if (row == nullptr) continue;
    for (std::int64_t s = 0; s < a.taps_w; ++s) {
      V tap[Vecs];
#pragma GCC unroll 4
      for (int v = 0; v < Vecs; ++v) load_vector<W>(tap[v], a.taps + (r * a.taps_w + s) * a.k + c0 + W * v);
#pragma GCC unroll 4
      for (int p = 0; p < Pixels; ++p) {
        const std::int64_t iw = (ow + p) * a.stride + s * a.dilation - a.pad_left;
        if (Checked && (iw < 0 || iw >= a.width)) continue;
#pragma GCC unroll 4
        for (int v = 0; v < Vecs; ++v) {
          V in;
          load_vector<W>(in, row + iw * a.k + c0 + W * v);
          sum[p][v] += tap[v] * in;
        }
      }
    }
  }
  if constexpr (Finish != DepthwiseFinish::after) {
    finish_sums<W, Finish>(a, sum, y, ow, c0);
  } else {
    store_sums<W>(sum, y + ow * a.k + c0, a.k);
  }
}

// The same for dilation 1, S taps across and a compile-time stride: input column j of the block
// feeds tap s of pixel (j - s) / Stride where that divides, so each input vector is loaded once
// for up to S / Stride products (the general block loads it once per product and waits on loads,
// not multiplies). `Checked` skips input columns in the horizontal padding.
// With Out = 2, output rows i and i + 1 of a square S x S filter at a vertical stride of 2
// (rows_in_pairs): their S + 2 input rows, the second's row r the first's r + 2, are read once for
// both (the second's rows start at rows + S, and y + q * k is its output). Finish other than
// `after`: finish_sums.
template <int W, int Vecs, int Pixels, int S, int Stride, bool Checked, int Out,
          DepthwiseFinish Finish = DepthwiseFinish::after>
[[gnu::always_inline]] inline void depthwise_block_across(const DepthwiseRows& a, const float* const* rows,
                                                          std::int64_t ow, std::int64_t c0, float* y) {
  using V = typename FloatVector<W>::type;
  V sum[Out][Pixels][Vecs];
#pragma GCC unroll 2
  for (int o = 0; o < Out; ++o) clear_sums<W>(sum[o]);
  // Filter row h - 2 * o of output row o, if there is one.
  const auto feeds = [](std::int64_t h, int o) { return Out == 1 || (h >= 2 * o && h - 2 * o < S); };
  const std::int64_t col0 = ow * Stride - a.pad_left;
  const auto input_row = [&](std::int64_t h, const float* row) __attribute__((always_inline)) {
    if (row == nullptr) return;
    const float* in0 = row + col0 * a.k + c0;
    V tap[Out][S][Vecs];
#pragma GCC unroll 2
    for (int o = 0; o < Out; ++o)
      if (feeds(h, o))
#pragma GCC unroll 5
        for (int s = 0; s < S; ++s)
#pragma GCC unroll 2
          for (int v = 0; v < Vecs; ++v)
            load_vector<W>(tap[o][s][v], a.taps + ((h - 2 * o) * S + s) * a.k + c0 + W * v);
#pragma GCC unroll 20
    for (int j = 0; j < (Pixels - 1) * Stride + S; ++j) {
      if (Checked && (col0 + j < 0 || col0 + j >= a.width)) continue;
#pragma GCC unroll 2
      for (int v = 0; v < Vecs; ++v) {
        V in;
        load_vector<W>(in, in0 + j * a.k + W * v);
#pragma GCC unroll 2
        for (int o = 0; o < Out; ++o)
#pragma GCC unroll 5
          for (int s = 0; s < S; ++s)
            if (feeds(h, o) && j - s >= 0 && (j - s) % Stride == 0 && (j - s) / Stride < Pixels)
              sum[o][(j - s) / Stride][v] += tap[o][s][v] * in;
      }
    }
  };
  if constexpr (Out == 1) {
    for (std::int64_t r = 0; r < a.taps_h; ++r) input_row(r, rows[r]);
  } else {
#pragma GCC unroll 7
    for (int h = 0; h < S + 2; ++h) input_row(h, h < S ? rows[h] : rows[S + h - 2]);
  }
  if constexpr (Finish != DepthwiseFinish::after) {
    static_assert(Out == 1);
    finish_sums<W, Finish>(a, sum[0], y, ow, c0);
  } else {
#pragma GCC unroll 2
    for (int o = 0; o < Out; ++o) store_sums<W>(sum[o], y + (o * a.q + ow) * a.k + c0, a.k);
  }
}

// One block of Out output rows: S taps across at a compile-time stride, or with S = 0 the general
// one (of one row).
template <int W, int Vecs, int Pixels, int S, int Stride, bool Checked, int Out, DepthwiseFinish Finish>
[[gnu::always_inline]] inline void depthwise_block_of(const DepthwiseRows& a, const float* const* rows, std::int64_t ow,
                                                      std::int64_t c0, float* y) {
  if constexpr (S > 0) {
    depthwise_block_across<W, Vecs, Pixels, S, Stride, Checked, Out, Finish>(a, rows, ow, c0, y);
  } else {
    static_assert(Out == 1);
    depthwise_block<W, Vecs, Pixels, Checked, Finish>(a, rows, ow, c0, y);
  }
}

// The lines of the rows in a.ahead under output columns [ow, ow + pixels), asked for by the
// first chunk's blocks so that their fetches overlap its arithmetic (fetched all at once before a
// row, they waited for memory before it).
[[gnu::always_inline]] inline void fetch_rows_ahead(const DepthwiseRows& a, std::int64_t ow, std::int64_t pixels) {
  const std::int64_t begin = ow * a.stride * a.k, end = std::min((ow + pixels) * a.stride, a.width) * a.k;
  for (std::int64_t r = 0; r < a.ahead_count; ++r) prefetch_floats(a.ahead[r] + begin, end - begin);
}

// The same for only the channels [c0, c0 + width) of a chunk (the last chunk's up to c_end),
// asked for by its own blocks: at stride 2 a band has twice the rows to fetch, and fetched by
// the first chunk alone they made 8x96x112x112 3x3 17-25 % slower.
template <int W>
[[gnu::always_inline]] inline void fetch_chunk_rows_ahead(const DepthwiseRows& a, std::int64_t ow,
                                                          std::int64_t pixels, std::int64_t c0, std::int64_t width) {
  const std::int64_t c_end = c0 + width + W > a.c_end ? a.c_end : c0 + width;
  const std::int64_t begin = ow * a.stride, end = std::min((ow + pixels) * a.stride, a.width);
  for (std::int64_t r = 0; r < a.ahead_count; ++r)
    for (std::int64_t column = begin; column < end; ++column)
      prefetch_floats(a.ahead[r] + column * a.k + c0, c_end - c0);
}

// One block of columns over chunk c0 (Chunks = 1); over c0 and the next, unrolled (Chunks = 2:
// 32-channel 3x3 layers ran 10-25 % slower as a loop, Zen 1); or over c0 and every later chunk to
// c_end (Chunks = 0).
template <int W, int Vecs, int Pixels, int S, int Stride, bool Checked, int Out, int Chunks, DepthwiseFinish Finish>
[[gnu::always_inline]] inline void depthwise_block_chunks(const DepthwiseRows& a, const float* const* rows,
                                                          std::int64_t ow, std::int64_t c0, float* y) {
  if constexpr (Chunks == 1) {
    depthwise_block_of<W, Vecs, Pixels, S, Stride, Checked, Out, Finish>(a, rows, ow, c0, y);
  } else if constexpr (Chunks == 2) {
    depthwise_block_of<W, Vecs, Pixels, S, Stride, Checked, Out, Finish>(a, rows, ow, c0, y);
    depthwise_block_of<W, Vecs, Pixels, S, Stride, Checked, Out, Finish>(a, rows, ow, c0 + W * Vecs, y);
  } else {
    for (std::int64_t c = c0; c < a.c_end; c += W * Vecs)
      depthwise_block_of<W, Vecs, Pixels, S, Stride, Checked, Out, Finish>(a, rows, ow, c, y);
  }
}

// Blocks of Pixels columns from ow while whole ones fit before `end`, checked where they reach
// into the horizontal padding. Chunks other than 1 run more chunks from c0 in each block
// (depthwise_block_chunks), for depthwise_pixel_major_body; Finish other than `after` finishes
// their sums in registers (finish_sums).
template <int W, int Vecs, int Pixels, int S, int Stride, int Out, int Chunks, DepthwiseFinish Finish>
[[gnu::always_inline]] inline void depthwise_blocks(const DepthwiseRows& a, const float* const* rows, std::int64_t c0,
                                                    float* y, std::int64_t& ow, std::int64_t end,
                                                    std::int64_t inside_begin, std::int64_t inside_end) {
  static_assert(Chunks == 1 || Stride == 1);
  for (; ow + Pixels <= end; ow += Pixels) {
    if constexpr (Stride == 1) {
      // The first chunk's blocks ask for the next rows; a pixel-major block runs from c_begin.
      if ((Chunks != 1 || c0 == a.c_begin) && rows == a.rows) fetch_rows_ahead(a, ow, Pixels);
    } else {
      if (rows == a.rows) fetch_chunk_rows_ahead<W>(a, ow, Pixels, c0, W * Vecs);
    }
    if (ow >= inside_begin && ow + Pixels <= inside_end) {
      depthwise_block_chunks<W, Vecs, Pixels, S, Stride, false, Out, Chunks, Finish>(a, rows, ow, c0, y);
    } else {
      depthwise_block_chunks<W, Vecs, Pixels, S, Stride, true, Out, Chunks, Finish>(a, rows, ow, c0, y);
    }
  }
}

// The columns of one chunk of channels (or with Chunks other than 1, of more chunks from c0 in
// each block: depthwise_blocks), in blocks across the whole row, the padding checked in
// the blocks at its edges. Each sum is a chain of as many FMAs as the filter has taps, so a block
// of few pixels waits on their latency: a row runs in as few blocks as fit. With S, the filter's
// width, a compile-time one: blocks of S taps across of 8, 7 and 4 pixels where 8 fit the
// registers, of 7 alone where they tile the row and 8 do not (8x672x14x14 5x5 as 8 + 4 + 2 ran
// 28 % slower), or else of 4 and 3 (8x1152x7x7 3x3 under AVX2 as 4 + 2 + 1, 25 %); then of 2.
// Otherwise general blocks of 4 and one of the 3, 2 or 1 columns left (singles at the edges of 7
// columns ran 10 % slower). Blocks of Out rows count their sums and taps Out times against the
// registers, and take their last column alone across.
template <int W, int Vecs, int S, int Stride, int Out, int Chunks = 1, DepthwiseFinish Finish = DepthwiseFinish::after>
[[gnu::always_inline]] inline void depthwise_columns(const DepthwiseRows& a, const float* const* rows, std::int64_t c0,
                                                     float* y, std::int64_t q, std::int64_t inside_begin,
                                                     std::int64_t inside_end) {
  std::int64_t ow = 0;
  if constexpr (S > 0) {
    if constexpr (block_fits<W>(Vecs, 8 * Out, S * Out)) {
      if (q % 8 == 0 || q % 7 != 0)
        depthwise_blocks<W, Vecs, 8, S, Stride, Out, Chunks, Finish>(a, rows, c0, y, ow, q, inside_begin, inside_end);
      depthwise_blocks<W, Vecs, 7, S, Stride, Out, Chunks, Finish>(a, rows, c0, y, ow, q, inside_begin, inside_end);
      depthwise_blocks<W, Vecs, 4, S, Stride, Out, Chunks, Finish>(a, rows, c0, y, ow, q, inside_begin, inside_end);
    } else {
      depthwise_blocks<W, Vecs, 4, S, Stride, Out, Chunks, Finish>(a, rows, c0, y, ow, q, inside_begin, inside_end);
      depthwise_blocks<W, Vecs, 3, S, Stride, Out, Chunks, Finish>(a, rows, c0, y, ow, q, inside_begin, inside_end);
    }
    depthwise_blocks<W, Vecs, 2, S, Stride, Out, Chunks, Finish>(a, rows, c0, y, ow, q, inside_begin, inside_end);
  } else {
    depthwise_blocks<W, Vecs, 4, 0, Stride, 1, Chunks, Finish>(a, rows, c0, y, ow, q, inside_begin, inside_end);
    depthwise_blocks<W, Vecs, 3, 0, Stride, 1, Chunks, Finish>(a, rows, c0, y, ow, q, inside_begin, inside_end);
    depthwise_blocks<W, Vecs, 2, 0, Stride, 1, Chunks, Finish>(a, rows, c0, y, ow, q, inside_begin, inside_end);
  }
  depthwise_blocks<W, Vecs, 1, Out == 1 ? 0 : S, Stride, Out, Chunks, Finish>(a, rows, c0, y, ow, q, inside_begin,
                                                                             inside_end);
}

// The epilogue over channels [c0, c0 + width) of output row i, just computed.
[[gnu::always_inline]] inline void depthwise_finish(const DepthwiseRows& a, float* y, std::int64_t i, std::int64_t c0,
                                                    std::int64_t width) {
  const std::int64_t at = i * a.q * a.k + c0;
  bias_activate_pixels_body(y + at, a.residual ? a.residual + at : nullptr, a.q, width, a.k,
                            a.bias ? a.bias + c0 : nullptr, a.act);
}

// Whether output rows i and i + 1, whose input rows are rows[0, 2 S), read an S x S filter's
// rows at a vertical stride of 2 with dilation 1: the second's row r is the first's r + 2.
template <int S> [[gnu::always_inline]] inline bool rows_in_pairs(const DepthwiseRows& a, const float* const* rows) {
  if (a.taps_h != S) return false;
  for (int r = 0; r + 2 < S; ++r)
    if (rows[S + r] != rows[r + 2]) return false;
  return true;
}

// One chunk of channels over every row of the band; with Pairs, two rows at a time where they
// share input rows; with Finish other than `after`, each block's sums finished in registers
// (finish_sums).
template <int W, int Vecs, int S, int Stride, bool Pairs, DepthwiseFinish Finish = DepthwiseFinish::after>
[[gnu::always_inline]] inline void depthwise_chunk(const DepthwiseRows& a, std::int64_t c0, float* y,
                                                   std::int64_t inside_begin, std::int64_t inside_end) {
  static_assert(!Pairs || Finish == DepthwiseFinish::after);
  for (std::int64_t i = 0; i < a.out_rows; ++i) {
    const float* const* rows = a.rows + i * a.taps_h;
    float* y_row = y + i * a.q * a.k;
    if constexpr (Pairs) {
      if (i + 1 < a.out_rows && rows_in_pairs<S>(a, rows)) {
        depthwise_columns<W, Vecs, S, Stride, 2>(a, rows, c0, y_row, a.q, inside_begin, inside_end);
        depthwise_finish(a, y, i, c0, W * Vecs);
        depthwise_finish(a, y, ++i, c0, W * Vecs);
        continue;
      }
    }
    depthwise_columns<W, Vecs, S, Stride, 1, 1, Finish>(a, rows, c0, y_row, a.q, inside_begin, inside_end);
    if constexpr (Finish == DepthwiseFinish::after) depthwise_finish(a, y, i, c0, W * Vecs);
  }
}

// Channels from c0 in chunks of W * Vecs while whole ones fit before c_end, then of half as
// many vectors, down to one; returns the first channel left.
template <int W, int Vecs, int S, int Stride, bool Pairs = false, DepthwiseFinish Finish = DepthwiseFinish::after>
[[gnu::always_inline]] inline std::int64_t depthwise_chunks(const DepthwiseRows& a, float* y, std::int64_t c0,
                                                            std::int64_t inside_begin, std::int64_t inside_end) {
  for (; c0 + W * Vecs <= a.c_end; c0 += W * Vecs)
    depthwise_chunk<W, Vecs, S, Stride, Pairs, Finish>(a, c0, y, inside_begin, inside_end);
  if constexpr (Vecs > 1)
    c0 = depthwise_chunks<W, Vecs / 2, S, Stride, Pairs, Finish>(a, y, c0, inside_begin, inside_end);
  return c0;
}

// The band's channels in vector chunks; returns the first channel left. Blocks of 3 or 5 taps
// across where the band's stride is Stride and its dilation 1, general blocks otherwise. With
// Finish other than `after`, no pairs of rows (finish_sums takes one row).
template <int W, int Stride, DepthwiseFinish Finish = DepthwiseFinish::after>
[[gnu::always_inline]] inline std::int64_t depthwise_vector_chunks(const DepthwiseRows& a, float* y,
                                                                   std::int64_t inside_begin, std::int64_t inside_end) {
  // Taps across at stride 2 take a register per tap and vector: with 16 (AVX2) and one vector a
  // block, 3x3 /2 layers ran 10-30 % slower than with the general blocks (5x5 /2 10 % faster).
  constexpr bool across_stride = Stride == 1 || vector_registers<W> == 32;
  const bool across = across_stride && a.stride == Stride && a.dilation == 1;
  if constexpr (Stride == 2 && depthwise_row_pairs<W> && Finish == DepthwiseFinish::after) {
    if (a.row_pairs && across && a.taps_w == 3)  // chunks of one vector, whose pairs fit
      return depthwise_chunks<W, 1, 3, Stride, true>(a, y, a.c_begin, inside_begin, inside_end);
  }
  // Blocks across take up to two vectors (with 16 registers two at 3 taps, in 4-pixel blocks:
  // 8-pixel blocks of one vector ran 6-25 % slower on 3x3 layers), general ones up to four (with
  // 16 registers three, whose 12 sums hide the FMA latency that 8 did not: AVX2 3x3 /2 and 5x5 /2
  // layers 10-20 % faster on 1 thread).
  if (across && a.taps_w == 3)
    return depthwise_chunks<W, block_vecs<W>(2, 3), 3, Stride, false, Finish>(a, y, a.c_begin, inside_begin,
                                                                             inside_end);
  if (across && a.taps_w == 5)
    return depthwise_chunks<W, block_vecs<W>(2, 5), 5, Stride, false, Finish>(a, y, a.c_begin, inside_begin,
                                                                             inside_end);
  return depthwise_chunks<W, block_vecs<W>(4, 1), 0, Stride, false, Finish>(a, y, a.c_begin, inside_begin,
                                                                            inside_end);
}

// The unit of a pixel-major band's range of channels (depthwise_pixel_major_body): a chunk of
// 3 taps across, which chunks of 5 divide (AVX2: 16 and 8 channels). 16 channels under AVX-512
// too, one vector, not the two that fit: in chunks of 32, EfficientNet's 144 and 240 channels
// would not run pixel-major.
template <int W> inline constexpr int depthwise_pixel_major_vecs(int taps) { return block_vecs<W>(16 / W, taps); }
template <int W> inline constexpr std::int64_t depthwise_pixel_major_channels = W * depthwise_pixel_major_vecs<W>(3);

// A band at stride 1 and dilation 1 of a filter S = 3 or 5 taps across, its chunks of channels
// block by block: each block of columns runs every chunk before the next block, rather than each
// chunk over the band's rows before the next chunk. A pixel's channels are then read one line
// after the next, where chunk by chunk a row's pass read one of a pixel's k / 16 lines (AVX2), or
// half of one (5x5). The epilogue runs on each output row over the band's channels, or with Finish
// other than `after` on each block's sums in registers. The caller's choice: nothing here checks
// the band's stride, dilation, taps_w or finish; c_end - c_begin must be a multiple of
// depthwise_pixel_major_channels<W>, or with Chunks = 2 exactly two chunks.
template <int W, int S, int Chunks, DepthwiseFinish Finish>
[[gnu::always_inline]] inline void depthwise_pixel_major_body(const DepthwiseRows& a, float* y) {
  constexpr int vecs = depthwise_pixel_major_vecs<W>(S);
  static_assert(depthwise_pixel_major_channels<W> % (W * vecs) == 0);
  // Output columns [inside_begin, inside_end) read no horizontal padding: depthwise_rows_body's
  // at stride 1 and dilation 1, written out (a helper shared with it changed its registers).
  const std::int64_t inside_begin = std::min(a.q, a.pad_left);
  const std::int64_t inside_end = std::max(inside_begin, std::min(a.q, a.width - S + 1 + a.pad_left));
  for (std::int64_t i = 0; i < a.out_rows; ++i) {
    depthwise_columns<W, vecs, S, 1, 1, Chunks, Finish>(a, a.rows + i * a.taps_h, a.c_begin, y + i * a.q * a.k, a.q,
                                                        inside_begin, inside_end);
    if constexpr (Finish == DepthwiseFinish::after) depthwise_finish(a, y, i, a.c_begin, a.c_end - a.c_begin);
  }
}

// Any band. Each Stride is a function of its own, which the caller picks (vector_kernels.inc):
// with the stride-2 blocks in the unit-stride function, inlined or only called from it, GCC
// allocated registers worse in the unit-stride blocks and they ran 10-17 % slower. With Finish
// other than `after`, chunk by chunk as ever, each block's sums finished in registers (the
// caller's choice); `streamed` for a band whose channels are whole vectors.
template <int W, int Stride, DepthwiseFinish Finish = DepthwiseFinish::after>
[[gnu::always_inline]] inline void depthwise_rows_body(const DepthwiseRows& a, float* y) {
  // Output columns [inside_begin, inside_end) read no horizontal padding.
  const std::int64_t q = a.q;
  const std::int64_t span = (a.taps_w - 1) * a.dilation;
  const std::int64_t inside_begin = std::min(q, (a.pad_left + a.stride - 1) / a.stride);
  const std::int64_t last = a.width - 1 - span + a.pad_left;  // the largest ow * stride inside
  const std::int64_t inside_end = std::max(inside_begin, last < 0 ? inside_begin : std::min(q, last / a.stride + 1));
  const std::int64_t c0 = depthwise_vector_chunks<W, Stride, Finish>(a, y, inside_begin, inside_end);
  if constexpr (Finish == DepthwiseFinish::streamed) return;  // whole vectors only
  for (std::int64_t c = c0; c < a.c_end; ++c)  // channels past the last multiple of W
    for (std::int64_t i = 0; i < a.out_rows; ++i) {
      const float* const* rows = a.rows + i * a.taps_h;
      for (std::int64_t ow = 0; ow < q; ++ow) {
        float sum = 0.0f;
        for (std::int64_t r = 0; r < a.taps_h; ++r) {
          if (rows[r] == nullptr) continue;
          for (std::int64_t s = 0; s < a.taps_w; ++s) {
            const std::int64_t iw = ow * a.stride + s * a.dilation - a.pad_left;
            if (iw >= 0 && iw < a.width) sum += a.taps[(r * a.taps_w + s) * a.k + c] * rows[r][iw * a.k + c];
          }
        }
        y[(i * q + ow) * a.k + c] = sum;
      }
    }
  for (std::int64_t i = 0; i < a.out_rows && c0 < a.c_end; ++i) depthwise_finish(a, y, i, c0, a.c_end - c0);
}

}  // namespace porta::detail
