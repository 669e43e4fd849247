#pragma once
// GEMM panels (`width` lanes, k-major) packed from f32 sources, compiled per instruction set
// (vector_kernels.hpp) with W its vector width. An element at a time, each element costs a load
// and a store, and the copy loops of 14-lane panels ran in 4-float pieces and scalar tails.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "backends/cpu/kernels/float_vector.hpp"

namespace porta::detail {

// Steps of depth whose lanes are contiguous runs (rows of a transposed A, of a plain B), step
// s's run at runs + s * run_stride: lanes [l0, l0 + width) of step s go to
// out + l0 * depth + s * width, the step's row in their panel. `last_steps`: the steps end the
// panels' depth.
using DealRunsFn = void (*)(const float* runs, std::int64_t run_stride, std::int64_t steps, std::int64_t lanes,
                            std::int64_t width, std::int64_t depth, bool last_steps, float* out);

// One panel from contiguous source rows: dst[p * width + i] = src[i * lane_stride + p] for lanes
// i < lanes and p < depth (a plain A's rows, a transposed B's columns), blocks of W rows x W
// steps of depth loaded as W vectors and transposed in registers. Like deal_runs, it leaves the
// padding lanes [lanes, width) to the caller (pack_panels zero-fills them).
using PackRowsFn = void (*)(const float* src, std::int64_t lane_stride, std::int64_t lanes, std::int64_t depth,
                            std::int64_t width, float* dst);

// out = a[From], b[From], a[From + 1], b[From + 1], ... (W lanes). Through references: a vector
// passed or returned by value outside a target attribute changes the ABI, and GCC warns.
template <int W, int From, std::size_t... Lane>
[[gnu::always_inline]] inline void interleave(const typename FloatVector<W>::type& a,
                                              const typename FloatVector<W>::type& b,
                                              typename FloatVector<W>::type& out, std::index_sequence<Lane...>) {
  out = __builtin_shufflevector(a, b, (From + Lane / 2 + (Lane % 2 == 0 ? 0 : W))...);
}

// Transposes the W x W block in v: log2(W) rounds, each interleaving row j with row j + W / 2.
template <int W>
[[gnu::always_inline]] inline void transpose_block(typename FloatVector<W>::type (&v)[W]) {
  using V = typename FloatVector<W>::type;
  constexpr auto lanes = std::make_index_sequence<W>();
#pragma GCC unroll 4
  for (int round = 1; round < W; round *= 2) {
    V t[W];
#pragma GCC unroll 8
    for (int j = 0; j < W / 2; ++j) {
      interleave<W, 0>(v[j], v[j + W / 2], t[2 * j], lanes);
      interleave<W, W / 2>(v[j], v[j + W / 2], t[2 * j + 1], lanes);
    }
#pragma GCC unroll 16
    for (int j = 0; j < W; ++j) v[j] = t[j];
  }
}

// A panel at a time, its rows as whole vectors, each of which may spill into the panel's next
// row, written after it; the panels' last step, whose spill would reach the next panel, and the
// runs' last panel, whose vectors would read past a run, go a float at a time. A panel narrower
// than W / 2 would spill past the next row.
template <int W>
[[gnu::always_inline]] inline void deal_runs_body(const float* runs, std::int64_t run_stride, std::int64_t steps,
                                                  std::int64_t lanes, std::int64_t width, std::int64_t depth,
                                                  bool last_steps, float* out) {
  using V = typename FloatVector<W>::type;
  const std::int64_t vectors = (width + W - 1) / W;
  const std::int64_t last_whole = 2 * width < W ? -1 : lanes - vectors * W;
  const std::int64_t whole_steps = last_steps ? steps - 1 : steps;
  const auto floats = [&](std::int64_t l0, std::int64_t p, std::int64_t count) {
    for (std::int64_t i = 0; i < count; ++i) out[l0 * depth + p * width + i] = runs[p * run_stride + l0 + i];
  };
  std::int64_t l0 = 0;
  for (; l0 <= last_whole; l0 += width) {
    for (std::int64_t p = 0; p < whole_steps; ++p)
      for (std::int64_t v = 0; v < vectors; ++v)
        __builtin_memcpy(out + l0 * depth + p * width + v * W, runs + p * run_stride + l0 + v * W, sizeof(V));
    for (std::int64_t p = whole_steps; p < steps; ++p) floats(l0, p, width);
  }
  for (; l0 < lanes; l0 += width)
    for (std::int64_t p = 0; p < steps; ++p) floats(l0, p, std::min(width, lanes - l0));
}

template <int W>
[[gnu::always_inline]] inline void pack_rows_body(const float* src, std::int64_t lane_stride, std::int64_t lanes,
                                                  std::int64_t depth, std::int64_t width, float* dst) {
  using V = typename FloatVector<W>::type;
  std::int64_t p = 0;
  // Every store is W floats wide, so one for lanes [g, g + W) also writes the first lanes of the
  // next step of depth: groups of lanes go last to first and steps in order, so the true values
  // land after the spill-over. The last step, whose spill-over would leave the panel, is a tail;
  // a panel narrower than W / 2 would spill past the next step.
  for (; 2 * width >= W && p + W < depth; p += W)
    for (std::int64_t g = (width - 1) / W * W; g >= 0; g -= W) {
      V v[W];
#pragma GCC unroll 16
      for (int i = 0; i < W; ++i) {  // rows past `lanes` are not read; their zeros are padding
        if (g + i < lanes) {
          __builtin_memcpy(&v[i], src + (g + i) * lane_stride + p, sizeof(V));
        } else {
          v[i] = V{};
        }
      }
      transpose_block<W>(v);
#pragma GCC unroll 16
      for (int j = 0; j < W; ++j) __builtin_memcpy(dst + (p + j) * width + g, &v[j], sizeof(V));
    }
  for (; p < depth; ++p)
    for (std::int64_t i = 0; i < lanes; ++i) dst[p * width + i] = src[i * lane_stride + p];
}

}  // namespace porta::detail
