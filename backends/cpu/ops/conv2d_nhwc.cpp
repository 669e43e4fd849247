// Conv2d on NHWC (channels-last) activations. Per image, Y[pixels, K] = X'[pixels, C*R*S] x
// W'[C*R*S, K]: the GEMM micro-kernel reads A in place from a zero-padded copy of the image, one
// row per output pixel (a filter tap only shifts where the rows start; with one group and no
// column dilation a whole filter row of taps is one contiguous run of S*C values), and B is the
// filters, packed once into the kernel's column panels. Depthwise layers have no reduction over
// channels and get a direct kernel that runs along the channels of a pixel instead.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "backends/cpu/kernels/cache_sizes.hpp"
#include "backends/cpu/kernels/epilogue.hpp"
#include "backends/cpu/kernels/micro_kernel.hpp"
#include "backends/cpu/kernels/scratch_pool.hpp"
#include "backends/cpu/kernels/vector_kernels.hpp"
#include "backends/cpu/ops/conv2d_nhwc.hpp"
#include "backends/cpu/ops/conv2d_winograd.hpp"
#include "backends/cpu/ops/tensor_io.hpp"
#include "backends/cpu/plans/conv_plan.hpp"
#include "backends/cpu/plans/depthwise_plan.hpp"
#include "core/runtime/plan_log.hpp"
#include "core/runtime/op_math.hpp"
#include "porta/error.hpp"

namespace porta::detail {
namespace {

// Filters as B panels: per group, panels of nr filters, each [r][s][c][nr] (so that depth index
// (r * S + s) * Cg + c follows the input's own order), zero past the group's last filter. A last
// panel of at most the kernel's tail_nr filters is packed that wide, in its panel's place.
std::int64_t packed_filters_size(const ConvDims& d, std::int64_t nr) {
  return d.groups * ceil_div(d.k_per_group, nr) * nr * d.c_per_group * d.r * d.s;
}

void pack_filters(const float* w, const ConvDims& d, const MicroKernel& kernel, float* dst) {
  const std::int64_t nr = kernel.nr, depth = d.c_per_group * d.r * d.s, panels = ceil_div(d.k_per_group, nr);
  tbb::parallel_for(std::int64_t{0}, d.groups * panels, [&](std::int64_t task) {
    const std::int64_t first = task / panels * d.k_per_group + task % panels * nr;
    const std::int64_t last = (task / panels + 1) * d.k_per_group;
    const std::int64_t width = panel_columns(kernel, std::min(nr, last - first));
    float* panel = dst + task * depth * nr;
    for (std::int64_t r = 0; r < d.r; ++r)
      for (std::int64_t s = 0; s < d.s; ++s)
        for (std::int64_t c = 0; c < d.c_per_group; ++c, panel += width)
          for (std::int64_t j = 0; j < width; ++j)
            panel[j] = first + j < last ? w[(((first + j) * d.c_per_group + c) * d.r + r) * d.s + s] : 0.0f;
  });
}

// Constant filters packed at prepare, for the kernel of the layer's plan (conv_kernel).
struct NhwcFilters final : HostNodeState {
  AlignedFloats panels;
};

// Images [first, first + count) copied, zero-padded, to `dst`, each `rows.image_floats` apart.
void copy_padded(const ConvOperands& op, const ConvRows& rows, std::int64_t first, std::int64_t count, float* dst) {
  const ConvDims& d = op.d;
  const std::int64_t row_floats = rows.wp * rows.pixel;
  tbb::parallel_for(std::int64_t{0}, count * rows.hp, [&](std::int64_t task) {
    const std::int64_t image = task / rows.hp, hh = task % rows.hp, h = hh * rows.step_h - op.p.pad[0];
    float* out = dst + image * rows.image_floats + hh * row_floats;
    if (h < 0 || h >= d.h) {
      std::fill_n(out, row_floats, 0.0f);
    } else if (rows.step_w > 1) {  // a strided 1x1 layer's pixels: no padding
      const float* in = op.x + ((first + image) * d.h + h) * d.w * d.c;
      for (std::int64_t ww = 0; ww < rows.wp; ++ww)
        std::copy_n(in + ww * rows.step_w * d.c, d.c, out + ww * rows.pixel);
    } else {
      const std::int64_t left = std::min(op.p.pad[1], rows.wp), inside = std::min(d.w, rows.wp - left);
      const float* in = op.x + ((first + image) * d.h + h) * d.w * d.c;
      std::fill_n(out, left * rows.pixel, 0.0f);
      if (rows.pixel == d.c) {
        std::copy_n(in, inside * d.c, out + left * d.c);
      } else {
        for (std::int64_t w = 0; w < inside; ++w) std::copy_n(in + w * d.c, d.c, out + (left + w) * rows.pixel);
      }
      std::fill(out + (left + inside) * rows.pixel, out + row_floats, 0.0f);
    }
    if (hh == rows.hp - 1)  // the overhang that the last tile's discarded rows read
      std::fill(dst + image * rows.image_floats + rows.hp * row_floats, dst + (image + 1) * rows.image_floats, 0.0f);
  });
}

// What all the tasks of a direct convolution share. y then also holds partial sums where every
// row of a whole tile is an output pixel: not where it is the residual's storage.
struct Direct {
  const ConvOperands& op;
  const ConvPlan& plan;
  const MicroKernel& kernel;
  const float* filters;  // packed by pack_filters for `kernel`
  Taps taps, narrow_taps;
  bool direct_rows;  // whole tiles land in y itself
  BiasActivateChannelsFn finish;
  BiasActivatePixelsFn activate_after;
};

// One task: a block of tiles of one segment of one image, by a block of filter panels of one group.
struct ConvTask {
  std::int64_t first, image, segment, group;  // image: within the copy of images from `first`
  std::int64_t tile0, tile_end, panel0;
  std::int64_t k0, k_count, ldc;  // the task's filters, and the stride of its block of sums
  const float* rows;              // the segment's first row of A, at the group's channels
};

ConvTask conv_task(const Direct& g, const float* source, std::int64_t first, std::int64_t task) {
  const ConvDims& d = g.op.d;
  const ConvPlan& plan = g.plan;
  const std::int64_t nr = g.kernel.nr;
  ConvTask t{};
  t.first = first;
  t.panel0 = task % plan.panel_blocks * plan.panels_per_task;
  t.tile0 = task / plan.panel_blocks % plan.tile_blocks * plan.tiles_per_task;
  t.group = task / (plan.panel_blocks * plan.tile_blocks) % d.groups;
  t.segment = task / (plan.panel_blocks * plan.tile_blocks * d.groups) % plan.rows.segments;
  t.image = task / (plan.panel_blocks * plan.tile_blocks * d.groups * plan.rows.segments);
  t.k0 = t.group * d.k_per_group + t.panel0 * nr;
  t.k_count = std::min(plan.panels_per_task * nr, (t.group + 1) * d.k_per_group - t.k0);
  t.ldc = plan.panels_per_task * nr;
  t.tile_end = std::min(plan.tiles, t.tile0 + plan.tiles_per_task);
  t.rows = source + t.image * plan.rows.image_floats + t.segment * g.op.p.stride[0] * plan.rows.wp * plan.rows.pixel +
           t.group * d.c_per_group;
  return t;
}

// What the micro-kernel applies to a whole panel of a tile stored in y at y0.
TileEpilogue epilogue_at(const Direct& g, const ConvTask& t, std::int64_t panel, std::int64_t y0) {
  const ConvOperands& op = g.op;
  return TileEpilogue{.bias = op.bias ? op.bias + t.k0 + panel * g.kernel.nr : nullptr,
                      .residual = op.residual ? op.residual + y0 + panel * g.kernel.nr : nullptr,
                      .ld_residual = op.d.k,
                      .activation = g.plan.activation_in_kernel ? op.p.activation : Activation::None};
}

// The sums of `tiles` consecutive tiles whose rows start at `a` with one filter panel, into c (ld
// apart): a call per depth slice, the last one finishing them with `epilogue` (may be null). Only
// the filters the task has are stored: a partial last panel lands in y with the others, through
// the tail kernel where it is packed narrower.
void sum_panel(const Direct& g, const ConvTask& t, const float* a, std::int64_t panel, float* c, std::int64_t ld,
               const TileEpilogue* epilogue, bool stream, std::int64_t tiles) {
  const ConvDims& d = g.op.d;
  const MicroKernel& kernel = g.kernel;
  const std::int64_t nr = kernel.nr, depth = d.c_per_group * d.r * d.s, tap_depth = g.plan.tap_depth, kc = g.plan.kc;
  const float* b = g.filters + (t.group * g.plan.panels + t.panel0 + panel) * depth * nr;
  const std::int64_t cols = std::min(nr, t.k_count - panel * nr), width = panel_columns(kernel, cols);
  const bool narrow = width < nr;
  const MicroKernelFn run = narrow ? kernel.run_tail_rows_a : stream ? kernel.run_streamed_a : kernel.run_rows_a;
  for (std::int64_t slice = 0; slice < tap_depth; slice += kc)
    run({.depth = std::min(kc, tap_depth - slice), .a = a + slice, .lda = g.plan.rows.lda,
         .taps = narrow ? g.narrow_taps : g.taps, .b = b + slice * width, .c = c, .ldc = ld, .tiles = tiles,
         .cols = static_cast<int>(cols), .accumulate = slice > 0,
         .epilogue = slice + kc >= tap_depth ? epilogue : nullptr});
}

// Every tile whole output pixels, consecutive in y, and nothing left to do after the
// micro-kernel: filter panel by panel, each over all the task's tiles, in one call per depth slice
// (README.md, `panel_by_panel`).
void run_pixels(const Direct& g, const ConvTask& t) {
  const ConvDims& d = g.op.d;
  const std::int64_t mr = g.kernel.mr, nr = g.kernel.nr;
  const std::int64_t y0 = ((t.first + t.image) * d.p + (g.plan.rows.segments == 1 ? 0 : t.segment)) * d.q * d.k +
                          t.k0 + t.tile0 * mr * d.k;
  for (std::int64_t panel = 0; panel * nr < t.k_count; ++panel) {
    const TileEpilogue epilogue = epilogue_at(g, t, panel, y0);
    sum_panel(g, t, t.rows + t.tile0 * mr * g.plan.rows.lda, panel, g.op.y.data() + y0 + panel * nr, d.k, &epilogue,
              g.plan.stream_input && panel == 0, t.tile_end - t.tile0);
  }
}

// Where a tile's rows go in y (at channel k0), or -1 for discarded pixels; one division per tile
// (one per row took a sixth of a 64-channel 1x1 layer's time).
std::array<std::int64_t, max_mr> tile_rows_in_y(const Direct& g, const ConvTask& t, std::int64_t tile) {
  const ConvDims& d = g.op.d;
  const ConvRows& rows = g.plan.rows;
  const std::int64_t mr = g.kernel.mr, j0 = tile * mr;
  std::array<std::int64_t, max_mr> y_at{};  // rows past mr unused
  std::int64_t oh = rows.segments == 1 ? j0 / rows.wp : t.segment, ow = rows.segments == 1 ? j0 % rows.wp : j0;
  for (std::int64_t i = 0; i < mr; ++i, ++ow) {
    if (ow == rows.wp) ow = 0, ++oh;  // the next row of a whole-image segment
    y_at[i] = j0 + i < rows.pixels && ow < d.q ? (((t.first + t.image) * d.p + oh) * d.q + ow) * d.k + t.k0 : -1;
  }
  return y_at;
}

// After a tile's sums: the activation the kernel could not apply, over the columns it stored in y
// (as one run where the tile's rows hold every filter, else row by row), the columns computed in
// `block`, and the conversion to y's dtype.
void finish_tile(const Direct& g, const ConvTask& t, const std::array<std::int64_t, max_mr>& y_at,
                 std::int64_t direct_cols, const float* block) {
  const ConvOperands& op = g.op;
  const std::int64_t mr = g.kernel.mr, k = op.d.k;
  const bool activate_stored = direct_cols > 0 && !g.plan.activation_in_kernel;
  const bool activated_whole = activate_stored && direct_cols == k;
  if (activated_whole) g.activate_after(op.y.data() + y_at[0], nullptr, mr, k, k, nullptr, op.p.activation);
  const bool activate_rows = activate_stored && !activated_whole;
  if (!activate_rows && direct_cols == t.k_count && !op.y.converts()) return;
  for (std::int64_t i = 0; i < mr; ++i) {
    const std::int64_t y_index = y_at[i];
    if (y_index < 0) continue;
    if (activate_rows) g.activate_after(op.y.data() + y_index, nullptr, 1, direct_cols, k, nullptr, op.p.activation);
    if (direct_cols < t.k_count)
      g.finish(op.y.data() + y_index + direct_cols, block + i * t.ldc + direct_cols,
               op.residual ? op.residual + y_index + direct_cols : nullptr, t.k_count - direct_cols,
               op.bias ? op.bias + t.k0 + direct_cols : nullptr, op.p.activation);
    op.y.commit(y_index, t.k_count);
  }
}

// Tile by tile: a tile whose rows are all kept lands in y itself, d.k apart, the call of each
// panel's last depth slice applying the epilogue in registers; other tiles, and partial panels,
// are computed into `block`, whose rows are written to y after the tile's sums. In place, the
// image's last tile would read past it: its rows are copied, zero-padded.
void run_tiles(const Direct& g, const ConvTask& t, bool all_direct) {
  const ConvOperands& op = g.op;
  const ConvRows& rows = g.plan.rows;
  const std::int64_t mr = g.kernel.mr, nr = g.kernel.nr;
  const auto block = gemm_scratch().acquire(static_cast<std::size_t>(all_direct ? 0 : mr * t.ldc));
  const bool short_tail = rows.in_place && rows.pixels % mr != 0 && t.tile_end == g.plan.tiles;
  const auto tail = gemm_scratch().acquire(static_cast<std::size_t>(short_tail ? mr * op.d.c : 0));
  for (std::int64_t tile = t.tile0; tile < t.tile_end; ++tile) {
    const float* a = t.rows + tile * mr * rows.lda;
    const std::array<std::int64_t, max_mr> y_at = tile_rows_in_y(g, t, tile);
    const bool direct = g.direct_rows && (tile + 1) * mr <= rows.pixels;
    const std::int64_t direct_cols = direct ? t.k_count : 0, y0 = y_at[0];
    // Ask for `block`'s lines in y now, for writing, so that fetching them overlaps the micro-kernel.
    if (direct_cols < t.k_count)
      for (std::int64_t i = 0; i < mr; ++i)
        if (y_at[i] >= 0) prefetch_floats<true>(op.y.data() + y_at[i] + direct_cols, t.k_count - direct_cols);
    if (short_tail && tile == g.plan.tiles - 1) {
      const std::int64_t kept = rows.pixels - tile * mr, group_offset = t.group * op.d.c_per_group;
      std::copy_n(a - group_offset, kept * op.d.c, tail.data());
      std::fill(tail.data() + kept * op.d.c, tail.data() + mr * op.d.c, 0.0f);
      a = tail.data() + group_offset;
    }
    for (std::int64_t panel = 0; panel * nr < t.k_count; ++panel) {
      const TileEpilogue epilogue = epilogue_at(g, t, panel, y0);
      if (panel * nr < direct_cols) {
        sum_panel(g, t, a, panel, op.y.data() + y0 + panel * nr, op.d.k, &epilogue, false, 1);
      } else {
        sum_panel(g, t, a, panel, block.data() + panel * nr, t.ldc, nullptr, false, 1);
      }
    }
    finish_tile(g, t, y_at, direct_cols, block.data());
  }
}

// One micro-kernel call per depth slice sums every filter tap, each a shift of the same rows
// (README.md, `taps_in_registers`); the plan says the rest.
void conv_gemm(const ConvOperands& op, const ConvPlan& plan, const float* filters) {
  const ConvDims& d = op.d;
  const ConvRows& rows = plan.rows;
  const MicroKernel& kernel = *plan.kernel;
  std::vector<std::int64_t> tap_shift;  // per tap, from the pixel's first input element
  for (std::int64_t r = 0; r < d.r; ++r)
    for (std::int64_t s = 0; s < (plan.row_runs ? 1 : d.s); ++s)
      tap_shift.push_back((r * op.p.dilation[0] * rows.wp + s * op.p.dilation[1]) * rows.pixel);
  const int taps = static_cast<int>(tap_shift.size());
  const VectorKernels& vk = vector_kernels();
  const Direct g{op,
                 plan,
                 kernel,
                 filters,
                 Taps{tap_shift.data(), taps, plan.tap_depth * kernel.nr},
                 Taps{tap_shift.data(), taps, plan.tap_depth * kernel.tail_nr},
                 plan.rows_are_pixels && op.residual != op.y.data(),
                 vk.bias_activate_channels,
                 vk.bias_activate_pixels};
  const auto copy =
      gemm_scratch().acquire(static_cast<std::size_t>(rows.in_place ? 1 : plan.images * rows.image_floats));
  for (std::int64_t first = 0; first < d.n; first += plan.images) {
    const std::int64_t count = std::min(plan.images, d.n - first);
    if (!rows.in_place) copy_padded(op, rows, first, count, copy.data());
    const float* source = rows.in_place ? op.x + first * rows.image_floats : copy.data();
    tbb::parallel_for(std::int64_t{0}, plan.tasks_per_copy(d, count), [&](std::int64_t task) {
      const ConvTask t = conv_task(g, source, first, task);
      const bool all_direct = g.direct_rows && t.tile_end * kernel.mr <= rows.pixels;
      if (all_direct && plan.activation_in_kernel && !op.y.converts()) return run_pixels(g, t);
      run_tiles(g, t, all_direct);
    });
  }
}

// Depthwise filters transposed to [tap][K], so that a tap's weights are contiguous like a
// pixel's channels; constant ones once, at prepare.
std::vector<float> depthwise_taps(const float* w, const ConvDims& d) {
  std::vector<float> taps(static_cast<std::size_t>(d.r * d.s * d.k));
  for (std::int64_t k = 0; k < d.k; ++k)
    for (std::int64_t t = 0; t < d.r * d.s; ++t) taps[static_cast<std::size_t>(t * d.k + k)] = w[k * d.r * d.s + t];
  return taps;
}

struct DepthwiseTaps final : HostNodeState {
  std::vector<float> taps;
};

// The band kernel of a plan's sweep.
DepthwiseRowsFn sweep_of(const VectorKernels& vk, DepthwiseSweep sweep) {
  switch (sweep) {
    case DepthwiseSweep::pixel_major: return vk.depthwise_pixel_major.run;
    case DepthwiseSweep::rows_stride2_streamed: return vk.depthwise_rows_stride2_streamed;
    case DepthwiseSweep::rows_stride2: return vk.depthwise_rows_stride2;
    case DepthwiseSweep::rows: return vk.depthwise_rows;
  }
  return vk.depthwise_rows;
}

// The input rows that one band of output rows reads, and those the image's next band reads and
// this one does not (to fetch ahead).
struct BandRows {
  std::vector<const float*> rows, ahead;
  std::int64_t ahead_count = 0;
};

void gather_band_rows(const ConvOperands& op, const DepthwisePlan& plan, std::int64_t n, std::int64_t oh0,
                      std::int64_t out_rows, BandRows& band) {
  const ConvDims& d = op.d;
  const std::int64_t stride_h = op.p.stride[0], span_h = (d.r - 1) * op.p.dilation[0] + 1;
  for (std::int64_t i = 0; i < out_rows; ++i)
    for (std::int64_t r = 0; r < d.r; ++r) {
      const std::int64_t h = (oh0 + i) * stride_h - op.p.pad[0] + r * op.p.dilation[0];
      band.rows[static_cast<std::size_t>(i * d.r + r)] = h >= 0 && h < d.h ? op.x + (n * d.h + h) * d.w * d.c : nullptr;
    }
  band.ahead_count = 0;
  if (const std::int64_t next = oh0 + out_rows; plan.fetch_next && next < d.p) {
    const std::int64_t next_end = std::min(d.p, next + plan.rows_per_band);
    const std::int64_t first = std::max((next - 1) * stride_h + span_h, next * stride_h) - op.p.pad[0];
    const std::int64_t end = (next_end - 1) * stride_h + span_h - op.p.pad[0];
    for (std::int64_t h = std::max<std::int64_t>(first, 0); h < std::min(end, d.h); ++h)
      band.ahead[static_cast<std::size_t>(band.ahead_count++)] = op.x + (n * d.h + h) * d.w * d.c;
  }
}

// The conversion to y's dtype of channels [c_begin, c_end) of `pixels` pixels from y_index.
void commit_channels(const F32Output& y, std::int64_t y_index, std::int64_t pixels, std::int64_t c_begin,
                     std::int64_t c_end, std::int64_t k) {
  if (c_end - c_begin == k) return y.commit(y_index, pixels * k);
  for (std::int64_t px = 0; px < pixels; ++px) y.commit(y_index + px * k + c_begin, c_end - c_begin);
}

// groups == C == K: every output channel reads its own input channel. Tasks are bands of an
// image's output rows and groups of 64 channels, run by the plan's band kernel. Where the kernel
// applies no epilogue, one pass over the band does (README.md, `kernel_epilogue`). Layers that
// stream ask for their input rows ahead: the kernel reads a pixel's lines a channel chunk at a
// time, which the hardware prefetchers follow poorly (README.md, `fetch_next`); then, where a task
// fetches the next band's rows, only a range's first task and an image's first band ask for theirs.
void depthwise(const ConvOperands& op, const std::vector<float>& taps) {
  const ConvDims& d = op.d;
  const DepthwiseOperands operands{.bias = op.bias != nullptr, .residual = op.residual != nullptr,
                                   .y_converts = op.y.converts(),
                                   .y_aligned = reinterpret_cast<std::uintptr_t>(op.y.data()) % 64 == 0};
  const DepthwisePlan plan = plan_depthwise(d, op.p, operands, host_machine());
  if (plans_wanted()) note_plan("cpu", describe(d, op.p), describe(plan));
  const VectorKernels& vk = vector_kernels();
  const DepthwiseRowsFn sweep = sweep_of(vk, plan.sweep);
  const std::int64_t stride_h = op.p.stride[0], span_h = (d.r - 1) * op.p.dilation[0] + 1;
  const auto run = [&](const tbb::blocked_range<std::int64_t>& range) {
    BandRows band{std::vector<const float*>(static_cast<std::size_t>(plan.rows_per_band * d.r)),
                  std::vector<const float*>(static_cast<std::size_t>(plan.rows_per_band * stride_h + span_h))};
    for (std::int64_t task = range.begin(); task != range.end(); ++task) {
      const std::int64_t n = task / plan.tasks_per_image(), band_index = task % plan.tasks_per_image() / plan.groups;
      const std::int64_t group = task % plan.groups;
      const std::int64_t oh0 = band_index * plan.rows_per_band, out_rows = std::min(plan.rows_per_band, d.p - oh0);
      const std::int64_t c_begin = group * plan.chunks_per_group * 64;
      const std::int64_t c_end = std::min(d.k, c_begin + plan.chunks_per_group * 64);
      gather_band_rows(op, plan, n, oh0, out_rows, band);
      if (plan.streams && (!plan.fetch_next || task == range.begin() || band_index == 0))
        for (const float* input_row : std::span(band.rows).first(static_cast<std::size_t>(out_rows * d.r)))
          if (input_row) prefetch_floats(input_row, d.w * d.c);
      const std::int64_t y_index = (n * d.p + oh0) * d.q * d.k;
      const float* residual = op.residual ? op.residual + y_index : nullptr;
      const bool in_kernel = plan.kernel_epilogue;
      float* y = op.y.data() + y_index;
      const DepthwiseRows args{.taps = taps.data(), .k = d.k, .taps_h = d.r, .taps_w = d.s, .rows = band.rows.data(),
                               .out_rows = out_rows, .q = d.q, .c_begin = c_begin, .c_end = c_end, .width = d.w,
                               .stride = op.p.stride[1], .dilation = op.p.dilation[1], .pad_left = op.p.pad[1],
                               .bias = in_kernel ? op.bias : nullptr, .residual = in_kernel ? residual : nullptr,
                               .residual_from_y = reinterpret_cast<std::uintptr_t>(residual) -
                                                  reinterpret_cast<std::uintptr_t>(y),
                               .act = in_kernel ? op.p.activation : Activation::None, .ahead = band.ahead.data(),
                               .ahead_count = band.ahead_count, .row_pairs = plan.row_pairs && plan.rows_per_band > 1,
                               .finish = plan.finish};
      sweep(args, y);
      const std::int64_t pixels = out_rows * d.q, width = c_end - c_begin;
      if (!in_kernel)
        vk.bias_activate_pixels(y + c_begin, residual ? residual + c_begin : nullptr, pixels, width, d.k,
                                op.bias ? op.bias + c_begin : nullptr, op.p.activation);
      commit_channels(op.y, y_index, pixels, c_begin, c_end, d.k);
    }
  };
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, d.n * plan.tasks_per_image()), run);
}

// Which algorithm runs a non-depthwise layer. PORTA_CPU_CONV overrides the heuristic
// (conv_algorithm): "direct", "winograd" (where it applies), or "measure": time both on the first
// prepare of each shape and thread count, and keep the faster for the process.
std::string_view algorithm_setting() {
  const char* value = std::getenv("PORTA_CPU_CONV");
  const std::string_view setting = value ? value : "auto";
  if (setting != "auto" && setting != "direct" && setting != "winograd" && setting != "measure")
    throw Error(ErrorCode::InvalidArgument,
                "PORTA_CPU_CONV=" + std::string(setting) + ": expected auto, direct, winograd or measure");
  return setting;
}

std::shared_ptr<const HostNodeState> packed_direct(const ConvDims& d, const Conv2dParams& p, const float* w) {
  const MicroKernel& kernel = conv_kernel(d, p, host_machine());
  auto packed = std::make_shared<NhwcFilters>();
  packed->panels = aligned_floats(static_cast<std::size_t>(packed_filters_size(d, kernel.nr)));
  pack_filters(w, d, kernel, packed->panels.get());
  return packed;
}

// The faster of the prepared candidates on seeded inputs of the layer's shape, best of three
// runs each, remembered per shape and thread count.
std::size_t measured_choice(const ConvDims& d, const Conv2dParams& p,
                            std::span<const std::shared_ptr<const HostNodeState>> candidates) {
  static std::mutex mutex;
  static std::map<std::vector<std::int64_t>, std::size_t> chosen;
  const std::vector<std::int64_t> key{d.n, d.c, d.h, d.w, d.k, d.r, d.s, p.stride[0], p.stride[1], p.dilation[0],
                                      p.dilation[1], p.pad[0], p.pad[1], p.pad[2], p.pad[3],
                                      tbb::this_task_arena::max_concurrency()};
  if (const std::lock_guard lock(mutex); chosen.contains(key)) return chosen.at(key);
  std::vector<float> x(static_cast<std::size_t>(d.n * d.h * d.w * d.c));
  std::uint32_t state = 1;
  for (float& v : x) v = static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) * 0x1p-24f - 0.5f;
  const TensorDesc y_desc{.dtype = DType::f32, .shape = {d.n, d.p, d.q, d.k}};
  std::vector<float> y(static_cast<std::size_t>(y_desc.numel()));
  const F32Output out(HostTensor{&y_desc, reinterpret_cast<std::byte*>(y.data())});
  const ConvOperands op{.d = d, .p = p, .x = x.data(), .w = nullptr, .bias = nullptr, .residual = nullptr, .y = out};
  std::vector<double> best(candidates.size(), INFINITY);
  for (int rep = 0; rep < 3; ++rep)
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      cpu_conv2d_nhwc(op, candidates[i].get());
      best[i] = std::min(best[i], std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  const auto faster = static_cast<std::size_t>(std::ranges::min_element(best) - best.begin());
  const std::lock_guard lock(mutex);
  return chosen.emplace(key, faster).first->second;
}

// The direct convolution: its plan made here, the filters packed for the plan's kernel at prepare
// (conv_kernel depends on nothing that changes in a process but the shape) or now.
void direct(const ConvOperands& op, const NhwcFilters* prepared) {
  const ConvPlan plan = plan_conv(op.d, op.p, host_machine());
  if (plans_wanted()) note_plan("cpu", describe(op.d, op.p), describe(plan));
  if (prepared) return conv_gemm(op, plan, prepared->panels.get());
  const auto packed = gemm_scratch().acquire(static_cast<std::size_t>(packed_filters_size(op.d, plan.kernel->nr)));
  pack_filters(op.w, op.d, *plan.kernel, packed.data());
  conv_gemm(op, plan, packed.data());
}

// Winograd F(4x4, 3x3), whose plan is its own (conv2d_winograd.cpp).
void winograd(const ConvOperands& op, const WinogradFilters* filters) {
  if (plans_wanted()) note_plan("cpu", describe(op.d, op.p), "conv winograd");
  conv_winograd(op, filters);
}

}  // namespace

void cpu_conv2d_nhwc(const ConvOperands& op, const HostNodeState* prepared) {
  if (const auto* filters = dynamic_cast<const NhwcFilters*>(prepared)) return direct(op, filters);
  if (const auto* filters = dynamic_cast<const WinogradFilters*>(prepared)) return winograd(op, filters);
  if (const auto* filters = dynamic_cast<const DepthwiseTaps*>(prepared)) return depthwise(op, filters->taps);
  switch (conv_algorithm(op.d, op.p, algorithm_setting())) {
    case ConvAlgorithm::depthwise: return depthwise(op, depthwise_taps(op.w, op.d));
    case ConvAlgorithm::winograd: return winograd(op, nullptr);
    case ConvAlgorithm::direct: return direct(op, nullptr);
  }
}

std::int64_t cpu_conv2d_nhwc_row_tile(const ConvDims& d, const Conv2dParams& p) {
  return conv_kernel(d, p, host_machine()).mr;
}

std::shared_ptr<const HostNodeState> cpu_prepare_conv2d_nhwc(const ConvDims& d, const Conv2dParams& p, const float* w) {
  const std::string_view setting = algorithm_setting();
  const ConvAlgorithm algorithm = conv_algorithm(d, p, setting);
  if (algorithm == ConvAlgorithm::depthwise) {
    auto transposed = std::make_shared<DepthwiseTaps>();
    transposed->taps = depthwise_taps(w, d);
    return transposed;
  }
  if (setting == "measure" && winograd_applies(d, p)) {
    const std::shared_ptr<const HostNodeState> candidates[] = {packed_direct(d, p, w),
                                                               std::make_shared<WinogradFilters>(d, w)};
    return candidates[measured_choice(d, p, candidates)];
  }
  if (algorithm == ConvAlgorithm::winograd) return std::make_shared<WinogradFilters>(d, w);
  return packed_direct(d, p, w);
}

}  // namespace porta::detail
