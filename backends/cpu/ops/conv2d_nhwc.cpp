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
#include "core/runtime/op_math.hpp"
#include "porta/error.hpp"

namespace porta::detail {
namespace {

bool is_depthwise(const ConvDims& d) { return d.groups == d.c && d.groups == d.k; }

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

// Constant filters packed at prepare, for the kernel they were packed for.
struct NhwcFilters final : HostNodeState {
  const MicroKernel* kernel = nullptr;
  AlignedFloats panels;
};

// Where A's rows are. The padded image is [hp][wp] pixels of C channels, `pixel` floats apart.
// With stride 1 an image is one segment whose pixel j is output (j / wp, j % wp), kept when
// j % wp < Q: every tap is then one shift of the same rows. Otherwise each output row is a
// segment of Q pixels, sw pixels apart. A pointwise layer (1x1, no padding) reads the input
// itself: nothing to pad. Strided, it does so where the kernel's tiles fill an output row, each
// row a segment (8x256x56x56->128 stride 2 against oneDNN, medians of 4: 1 thread 0.93 -> 0.98,
// 2 threads 0.82 -> 1.00, where a copy per image had to finish before its GEMM began; with a
// short tile ending each row, copied and finished through a buffer, 8x64x56x56->64 stride 2 fell
// from 0.81 to 0.42-0.55 on 2 threads). Rows that crowd into too few L1 sets (4 KiB apart: all
// into one) would evict each other; their copy spaces the pixels out instead (and a filter row
// of taps is then no longer one contiguous run). A strided 1x1 layer not read in place copies
// only the pixels it reads, [P][Q], and is then read like a pointwise one: one segment, whole
// tiles (its output rows alone can be shorter than a tile).
struct Rows {
  bool in_place;
  std::int64_t hp, wp;
  std::int64_t step_h, step_w;    // input pixels between neighbouring pixels of the copy
  std::int64_t segments, pixels;  // per image; pixels per segment
  std::int64_t pixel;             // floats between neighbouring pixels of the source
  std::int64_t lda;               // floats between consecutive rows of A
  std::int64_t image_floats;      // per image, copies with room for the last tile's overhang
};

// Pointwise (1x1, unpadded, any stride): A's rows are the input's pixels, every one or every
// stride-th.
bool is_pointwise(const ConvDims& d, const Conv2dParams& p) {
  return d.r == 1 && d.s == 1 && std::ranges::all_of(p.pad, [](std::int64_t v) { return v == 0; });
}

Rows rows_of(const ConvDims& d, const Conv2dParams& p, std::int64_t mr) {
  Rows rows{};
  const bool unit = p.stride[0] == 1 && p.stride[1] == 1;
  const bool pointwise = is_pointwise(d, p);
  rows.in_place = pointwise && (unit || d.q % mr == 0) && !rows_alias_in_l1(mr, p.stride[1] * d.c);
  const bool subsampled = pointwise && !unit && !rows.in_place;
  const bool dense = unit || subsampled;  // A's rows follow each other in the source
  const std::int64_t row_step = dense ? 1 : p.stride[1];
  const bool alias = !rows.in_place && rows_alias_in_l1(mr, row_step * d.c);
  rows.step_h = subsampled ? p.stride[0] : 1;
  rows.step_w = subsampled ? p.stride[1] : 1;
  // Only the window the taps reach: padding past it (or rows a large stride skips at the
  // bottom) is never read.
  rows.hp = rows.in_place ? d.h : subsampled ? d.p : (d.p - 1) * p.stride[0] + (d.r - 1) * p.dilation[0] + 1;
  rows.wp = rows.in_place ? d.w : subsampled ? d.q : (d.q - 1) * p.stride[1] + (d.s - 1) * p.dilation[1] + 1;
  rows.segments = dense ? 1 : d.p;
  rows.pixels = dense ? (d.p - 1) * rows.wp + d.q : d.q;
  rows.pixel = alias ? d.c + 16 : d.c;
  rows.lda = row_step * rows.pixel;
  rows.image_floats = (rows.hp * rows.wp + (rows.in_place ? 0 : mr * row_step)) * rows.pixel;
  return rows;
}

// Whether the input, read in place as one segment, is larger than an eighth of L3, and so comes
// from L3 or memory: the micro-kernel then streams it (conv_gemm).
bool input_streams(const ConvDims& d, const Rows& rows) {
  const std::int64_t input_bytes = d.n * d.h * d.w * d.c * std::int64_t{sizeof(float)};
  return rows.in_place && rows.segments == 1 && input_bytes > host_cache_sizes().l3 / 8;
}

// The kernel that computes the fewest padding rows and columns: tiles of its mr over a segment
// of A's rows (their count is the same for every kernel), panels of its nr over a group's filters.
// A 7x7 image's 49 pixels fill tiles of 7, and only 3.5 of 14. A 1x1 layer of 64 filters takes
// AVX-512's 6x64 kernel, which writes whole pixels in one pass, and so does one of a multiple of
// 64 filters whose input streams (filter_micro_kernel_for). Whether a strided 1x1 layer's rows
// are read in place depends on the kernel's mr: the rows counted are those the GEMM kernel would
// read.
// A 1x1 layer whose rows would crowd that kernel's L1 sets (1024 channels: 4 KiB apart) takes the
// GEMM's kernel for such rows, fewer of them than a set has ways, and reads them in place, not
// from a spaced copy per image that had to finish before its GEMM began (8x1024x14x14->256
// against oneDNN, medians of 4-6 in three sets: 2 threads 0.91-0.93 -> 0.95-0.98, 1 thread 0.95
// -> 0.93-0.95; at N=1, 2 threads, 1.20-1.25 -> 1.16-1.20; 8x2048x7x7->512 level).
const MicroKernel& kernel_for(const ConvDims& d, const Conv2dParams& p) {
  const bool pointwise = is_pointwise(d, p);
  const Rows rows = rows_of(d, p, gemm_micro_kernel().mr);
  const MicroKernel& kernel = filter_micro_kernel_for(d.k_per_group, rows.pixels, pointwise, input_streams(d, rows));
  if (pointwise && rows_alias_in_l1(kernel.mr, p.stride[1] * d.c)) {
    const MicroKernel& fewer_rows = gemm_micro_kernel_for(d.k_per_group, true);
    if (rows_of(d, p, fewer_rows.mr).in_place) return fewer_rows;
  }
  return kernel;
}

// Images [first, first + count) copied, zero-padded, to `dst`, each `rows.image_floats` apart.
void copy_padded(const ConvOperands& op, const Rows& rows, std::int64_t first, std::int64_t count, float* dst) {
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

// `filters` packed by pack_filters for `kernel`.
void conv_gemm(const ConvOperands& op, const MicroKernel& kernel, const float* filters) {
  const ConvDims& d = op.d;
  const std::int64_t mr = kernel.mr, nr = kernel.nr;
  const Rows rows = rows_of(d, op.p, mr);
  const std::int64_t depth = d.c_per_group * d.r * d.s, panels = ceil_div(d.k_per_group, nr);
  // A filter row of taps is one run of the input when channels and columns are contiguous.
  const bool row_runs = d.groups == 1 && op.p.dilation[1] == 1 && rows.pixel == d.c;
  const std::int64_t tap_depth = row_runs ? d.s * d.c : d.c_per_group;
  std::vector<std::int64_t> tap_shift;  // per tap, from the pixel's first input element
  for (std::int64_t r = 0; r < d.r; ++r)
    for (std::int64_t s = 0; s < (row_runs ? 1 : d.s); ++s)
      tap_shift.push_back((r * op.p.dilation[0] * rows.wp + s * op.p.dilation[1]) * rows.pixel);
  // One micro-kernel call per depth slice sums every tap (ResNet-50's conv1, 7 taps of 21, ran
  // 5-10 % slower when each tap's sums went through y). Slices as deep as the GEMM's: each one
  // more is a pass over the tile's sums in y, which cost more than the B panel's lines coming
  // from L2 rather than L1, as in the GEMM (Zen 4, 32 KiB L1, ResNet-50's 1x1 layers against
  // oneDNN, medians of 2 suites: 8x512x28x28->128 0.91 -> 1.02 on 1 thread, 0.94 -> 1.03 on 2;
  // geometric mean of the 80 rows 1.34 -> 1.39, rows below 1.0 27 -> 14; under AVX2 1.21 -> 1.23
  // and none slower. Before, a slice's B panel filled half of L1: 128 deep there, 4 passes for 512
  // channels).
  const Taps taps{tap_shift.data(), static_cast<int>(tap_shift.size()), tap_depth * nr};
  const Taps narrow_taps{tap_shift.data(), static_cast<int>(tap_shift.size()), tap_depth * kernel.tail_nr};
  const std::int64_t kc = max_depth_slice;

  // As many images per copy as fit in L2 (at least one), so that the copy is still cached when
  // the GEMM reads it; in place, every image at once.
  const std::int64_t l2_floats = host_cache_sizes().l2 / std::int64_t{sizeof(float)};
  const std::int64_t images = rows.in_place ? d.n : std::clamp<std::int64_t>(l2_floats / rows.image_floats, 1, d.n);
  const auto copy = gemm_scratch().acquire(static_cast<std::size_t>(rows.in_place ? 1 : images * rows.image_floats));
  // A task takes as many filter panels as fit a quarter of L2, at least 4: then fewer tasks read
  // each tile's A rows and y's pixels are written in longer runs (ResNet-50's 1x1 layers that
  // widen 64-256 channels fourfold ran 5-18 % faster than with 4 panels; 16 panels of 2048-deep
  // filters, 4 MiB, ran at half speed on 2 threads).
  const std::int64_t panel_bytes = depth * nr * std::int64_t{sizeof(float)};
  const std::int64_t panels_per_task =
      std::clamp(host_cache_sizes().l2 / 4 / panel_bytes, std::min<std::int64_t>(panels, 4), panels);
  const std::int64_t panel_blocks = ceil_div(panels, panels_per_task);
  // And up to 4 register tiles of pixels (8 of tiles under 8 rows, about as many pixels:
  // 8x64x56x56->64 in AVX-512's tiles of 6, +0.5-2 % against oneDNN on 1 and 2 threads, AVX2's
  // 6x16 level), fewer where that would leave the threads fewer than 6 tasks each to balance: a
  // 14x14 image in tasks of 4, 4, 4 and 2 tiles left one of 2 threads 16 of 28 (on 2 threads
  // ResNet-50's 1x1 layers at 14x14 and 7x7 now run 10-13 % faster, its 7x7 3x3 layer 19 %;
  // 28x28 layers, 14 tasks of 4, are as they were).
  const std::int64_t tiles = ceil_div(rows.pixels, mr);
  const std::int64_t other_units = images * rows.segments * d.groups * panel_blocks;
  const std::int64_t threads = tbb::this_task_arena::max_concurrency();
  std::int64_t tiles_per_task = std::min<std::int64_t>(tiles, mr < 8 ? 8 : 4);
  while (tiles_per_task > 1 && ceil_div(tiles, tiles_per_task) * other_units < 6 * threads) --tiles_per_task;
  const std::int64_t tile_blocks = ceil_div(tiles, tiles_per_task);

  const BiasActivateChannelsFn finish = vector_kernels().bias_activate_channels;
  const BiasActivatePixelsFn activate_after = vector_kernels().bias_activate_pixels;
  // Every row of a whole tile is an output pixel, the next one d.k floats on, when no pixel of a
  // segment is discarded: a segment is one output row, or a whole image as wide as the output.
  // y then also holds partial sums: not where it is the residual's storage. The micro-kernel
  // adds bias and residual on its way there, and applies the activations that are a clamp; the
  // others (sigmoid, SiLU, ...) run over the tile's stored rows afterwards.
  const bool direct_rows = (rows.segments > 1 || rows.wp == d.q) && op.residual != op.y.data();
  // An input read in place that is larger than an eighth of L3 comes from L3 or memory: in tasks
  // of whole tiles, the micro-kernel of the first panel over a tile streams it, fetching the next
  // tile's rows as it goes (ARead; a 16-wide tail panel does not, which leaves a task holding
  // only that panel unstreamed). Against oneDNN (medians of 4-5), 1 thread: 8x256x56x56->64
  // 1.11 -> 1.25, 8x512x28x28->128 0.99 -> 1.06, 8x240x28x28->40 0.90 -> 0.95, 8x64x56x56->64
  // 0.89 -> 0.90; 2 threads: 1.17 -> 1.29, 0.96 -> 0.99, -, 0.91 -> 0.94. Before, the next
  // tile's rows were asked for all at once before each tile, which had made 8x64x56x56->64 0.77
  // -> 0.93 and 8x32x112x112->16 0.92 -> 1.31; streamed they keep that.
  // Not where each output row is a segment (strided): the next tile's rows at a segment's end are
  // rows it skips (8x256x56x56->128 stride 2, 1 thread, 0.98 -> 0.86 streamed).
  const bool stream_input = input_streams(d, rows);
  const bool in_kernel = TileEpilogue::fusable(op.p.activation);

  for (std::int64_t first = 0; first < d.n; first += images) {
    const std::int64_t count = std::min(images, d.n - first);
    if (!rows.in_place) copy_padded(op, rows, first, count, copy.data());
    const float* source = rows.in_place ? op.x + first * rows.image_floats : copy.data();
    const std::int64_t tasks = count * rows.segments * d.groups * tile_blocks * panel_blocks;
    tbb::parallel_for(std::int64_t{0}, tasks, [&](std::int64_t task) {
      const std::int64_t panel0 = task % panel_blocks * panels_per_task;
      const std::int64_t tile0 = task / panel_blocks % tile_blocks * tiles_per_task;
      const std::int64_t group = task / (panel_blocks * tile_blocks) % d.groups;
      const std::int64_t segment = task / (panel_blocks * tile_blocks * d.groups) % rows.segments;
      const std::int64_t image = task / (panel_blocks * tile_blocks * d.groups * rows.segments);
      const std::int64_t k0 = group * d.k_per_group + panel0 * nr;
      const std::int64_t k_count = std::min(panels_per_task * nr, (group + 1) * d.k_per_group - k0);
      const std::int64_t ldc = panels_per_task * nr;
      const std::int64_t tile_end = std::min(tiles, tile0 + tiles_per_task);
      const bool all_direct = direct_rows && tile_end * mr <= rows.pixels;
      const float* segment_rows =
          source + image * rows.image_floats + segment * op.p.stride[0] * rows.wp * rows.pixel + group * d.c_per_group;
      // What the micro-kernel applies to a whole panel of a tile stored in y at y0.
      const auto epilogue_at = [&](std::int64_t panel, std::int64_t y0) {
        return TileEpilogue{.bias = op.bias ? op.bias + k0 + panel * nr : nullptr,
                            .residual = op.residual ? op.residual + y0 + panel * nr : nullptr,
                            .ld_residual = d.k,
                            .activation = in_kernel ? op.p.activation : Activation::None};
      };
      // The sums of `tiles` consecutive tiles whose rows start at `a` with one filter panel, into
      // c (ld apart): a call per depth slice, the last one finishing them with `epilogue` (may be
      // null). Only the filters the task has are stored: a partial last panel lands in y with the
      // others, through the tail kernel where it is packed narrower.
      const auto sum_panel = [&](const float* a, std::int64_t panel, float* c, std::int64_t ld,
                                 const TileEpilogue* epilogue, bool stream, std::int64_t tiles) {
        const float* b = filters + (group * panels + panel0 + panel) * depth * nr;
        const std::int64_t cols = std::min(nr, k_count - panel * nr), width = panel_columns(kernel, cols);
        const bool narrow = width < nr;
        const MicroKernelFn run =
            narrow ? kernel.run_tail_rows_a : stream ? kernel.run_streamed_a : kernel.run_rows_a;
        for (std::int64_t slice = 0; slice < tap_depth; slice += kc)
          run(std::min(kc, tap_depth - slice), a + slice, rows.lda, narrow ? narrow_taps : taps, b + slice * width, c,
              ld, tiles, static_cast<int>(cols), slice > 0, slice + kc >= tap_depth ? epilogue : nullptr);
      };
      if (all_direct && in_kernel && !op.y.converts()) {
        // Every tile whole output pixels, consecutive in y, and nothing left to do after the
        // micro-kernel: filter panel by panel, each over all the task's tiles (ResNet-50's 1x1
        // layers of 64 input channels 5-20 % faster than tile by tile, as the tiles below go), in
        // one call per depth slice (MicroKernelFn's tiles). Against oneDNN, 1 thread,
        // medians of 4: 1x16x112x112->96 0.75 -> 0.90, 1x24x56x56->144 0.86 -> 0.98,
        // 8x64x56x56->256 0.94 -> 1.03.
        const std::int64_t y0 = ((first + image) * d.p + (rows.segments == 1 ? 0 : segment)) * d.q * d.k + k0 +
                                tile0 * mr * d.k;
        for (std::int64_t panel = 0; panel * nr < k_count; ++panel) {
          const TileEpilogue epilogue = epilogue_at(panel, y0);
          sum_panel(segment_rows + tile0 * mr * rows.lda, panel, op.y.data() + y0 + panel * nr, d.k, &epilogue,
                    stream_input && panel == 0, tile_end - tile0);
        }
        return;
      }
      // Tiles that are not all output pixels, and partial panels, are computed into `block`.
      const auto block = gemm_scratch().acquire(static_cast<std::size_t>(all_direct ? 0 : mr * ldc));
      // In place, the image's last tile would read past it: its rows are copied, zero-padded.
      const bool short_tail = rows.in_place && rows.pixels % mr != 0 && tile_end == tiles;
      const auto tail = gemm_scratch().acquire(static_cast<std::size_t>(short_tail ? mr * d.c : 0));
      for (std::int64_t tile = tile0; tile < tile_end; ++tile) {
        const float* a = segment_rows + tile * mr * rows.lda;
        // Where the tile's rows go in y (at channel k0), or -1 for discarded pixels; one division
        // per tile (one per row took a sixth of a 64-channel 1x1 layer's time).
        std::array<std::int64_t, max_mr> y_at{};  // rows past mr unused; GCC cannot tell
        {
          const std::int64_t j0 = tile * mr;
          std::int64_t oh = rows.segments == 1 ? j0 / rows.wp : segment, ow = rows.segments == 1 ? j0 % rows.wp : j0;
          for (std::int64_t i = 0; i < mr; ++i, ++ow) {
            if (ow == rows.wp) ow = 0, ++oh;  // the next row of a whole-image segment
            y_at[i] = j0 + i < rows.pixels && ow < d.q ? (((first + image) * d.p + oh) * d.q + ow) * d.k + k0 : -1;
          }
        }
        // A tile whose rows are all kept lands in y itself, d.k apart, and the call of each
        // panel's last depth slice applies the epilogue in registers; other tiles go through
        // `block`.
        const bool direct = direct_rows && (tile + 1) * mr <= rows.pixels;
        const std::int64_t direct_cols = direct ? k_count : 0, y0 = y_at[0];
        // `block`'s rows are written to y once, after the tile's sums: ask for their lines now,
        // for writing, so that fetching them overlaps the micro-kernel instead of stalling the
        // stores.
        if (direct_cols < k_count)
          for (std::int64_t i = 0; i < mr; ++i)
            if (y_at[i] >= 0) prefetch_floats<true>(op.y.data() + y_at[i] + direct_cols, k_count - direct_cols);
        if (short_tail && tile == tiles - 1) {
          const std::int64_t kept = rows.pixels - tile * mr, group_offset = group * d.c_per_group;
          std::copy_n(a - group_offset, kept * d.c, tail.data());
          std::fill(tail.data() + kept * d.c, tail.data() + mr * d.c, 0.0f);
          a = tail.data() + group_offset;
        }
        for (std::int64_t panel = 0; panel * nr < k_count; ++panel) {
          const bool to_y = panel * nr < direct_cols;
          const TileEpilogue epilogue = epilogue_at(panel, y0);
          if (to_y) {
            sum_panel(a, panel, op.y.data() + y0 + panel * nr, d.k, &epilogue, false, 1);
          } else {
            sum_panel(a, panel, block.data() + panel * nr, ldc, nullptr, false, 1);
          }
        }
        // The activation the kernel could not apply, over the columns it stored: as one run where
        // the tile's rows hold every filter, else row by row below.
        const bool activate_stored = direct_cols > 0 && !in_kernel;
        const bool activated_whole = activate_stored && direct_cols == d.k;
        if (activated_whole) activate_after(op.y.data() + y0, nullptr, mr, d.k, d.k, nullptr, op.p.activation);
        const bool activate_rows = activate_stored && !activated_whole;
        // Row by row: that activation, the columns computed in `block`, and the conversion to
        // y's dtype.
        if (!activate_rows && direct_cols == k_count && !op.y.converts()) continue;
        for (std::int64_t i = 0; i < mr; ++i) {
          const std::int64_t y_index = y_at[i];
          if (y_index < 0) continue;
          if (activate_rows)
            activate_after(op.y.data() + y_index, nullptr, 1, direct_cols, d.k, nullptr, op.p.activation);
          if (direct_cols < k_count)
            finish(op.y.data() + y_index + direct_cols, block.data() + i * ldc + direct_cols,
                   op.residual ? op.residual + y_index + direct_cols : nullptr, k_count - direct_cols,
                   op.bias ? op.bias + k0 + direct_cols : nullptr, op.p.activation);
          op.y.commit(y_index, k_count);
        }
      }
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

// groups == C == K: every output channel reads its own input channel. Tasks are bands of an
// image's output rows and groups of 64 channels, run by the vectorised band kernel.
void depthwise(const ConvOperands& op, const std::vector<float>& taps) {
  const ConvDims& d = op.d;
  // Sigmoid and SiLU, bound by arithmetic, run in the kernel on each row of a channel chunk as
  // soon as it is computed, in L1 (8x480x14x14 3x3 with bias and SiLU 27 -> 44 GFLOP/s, 1T; in
  // pixel-major bands, on each row of the band's channels, not measured apart); the cheap
  // epilogues in one pass over the band (in the kernel, 64 channels at a time, they ran 5-18 %
  // slower).
  const VectorKernels& vk = vector_kernels();
  const BiasActivatePixelsFn finish = vk.bias_activate_pixels;
  const bool exp_based = op.p.activation == Activation::Sigmoid || op.p.activation == Activation::Silu;
  const std::int64_t stride_h = op.p.stride[0], span_h = (d.r - 1) * op.p.dilation[0] + 1;
  const std::int64_t row_bytes = d.w * d.c * std::int64_t{sizeof(float)};
  const std::int64_t out_row_bytes = d.q * d.k * std::int64_t{sizeof(float)};
  const CacheSizes& cache = host_cache_sizes();
  // Where input and output stay in L3, bands of output rows whose input and output rows fill
  // half of L2: a channel chunk's pass over the band then finds the input lines that the rows
  // before read in L1 (N=8 on 1 thread: 672x14x14 5x5/2 +10-14 %, 1152x7x7 5x5 +16-18 %,
  // 480x14x14 3x3 +10-12 %; N=1 +5-37 %). Layers that stream from memory run one row a band
  // (8x144x56x56 3x3 ran 15 % slower in bands; 3x3 /2 ones a pair, below), and ask for their
  // input rows ahead: the kernel reads a pixel's cache lines a channel chunk at a time, a pattern
  // the hardware prefetchers follow poorly (8x96x112x112 3x3/2 +15-19 % when each band asked for
  // its rows before it ran; fetched by the kernel as the band before runs, 8x144x56x56 3x3
  // +45-55 %, 8x32x112x112 +64 % on 1 thread). On more threads, bands ran faster up to two thirds
  // of L3 (2T, 18-19 MB of data: 8x144x56x56 5x5/2 +31 %, 6x32x112x112 3x3 +15 %; rows won at
  // 24 MB in one run of two, and at 26-29 MB).
  const std::int64_t threads = tbb::this_task_arena::max_concurrency(), chunks = ceil_div(d.k, 64);
  const std::int64_t bytes = d.n * (d.h * row_bytes + d.p * out_row_bytes);
  const bool streams = bytes > (threads == 1 ? cache.l3 / 2 : cache.l3 / 3 * 2);
  const std::int64_t fitting = (cache.l2 / 2 - (span_h - stride_h) * row_bytes) /
                               (stride_h * row_bytes + out_row_bytes);
  // Streaming 3x3 /2 layers run in bands of two rows, which the kernel computes as pairs that
  // read their shared input row once (DepthwiseRows::row_pairs), where it can: under AVX2, two-row
  // bands of single rows ran 11 % slower than one-row bands (8x96x112x112, 1 thread).
  const bool row_pairs = streams && vk.depthwise_row_pairs && d.r == 3 && d.s == 3 && stride_h == 2 &&
                         op.p.stride[1] == 2 && span_h == 3 && op.p.dilation[1] == 1;
  const std::int64_t band_rows = streams ? (row_pairs ? 2 : 1) : std::clamp<std::int64_t>(fitting, 1, d.p);
  // Pixel-major bands of layers that stream can finish their sums in registers and write them
  // past the caches (DepthwiseRows::stream), where y is f32 and the activation a cheap one. SiLU
  // there (its exp and division in each block, not in a loop over a row in L1) ran slower.
  const bool cheap_act = op.p.activation == Activation::None || op.p.activation == Activation::Relu ||
                         op.p.activation == Activation::Relu6;
  const bool can_stream = streams && cheap_act && !op.y.converts() &&
                          reinterpret_cast<std::uintptr_t>(op.y.data()) % 64 == 0;  // a vector of any set
  // Bands of filters 3 or 5 wide, at stride 1 and dilation 1 across, run pixel-major where the
  // instruction set has such a kernel. Under AVX2 (native / oneDNN on 1 thread, Zen 1, 8773aa5
  // and 03e305c): all 5 wide, whose chunk-major passes read half a cache line each
  // (1x672x14x14 0.93 -> 1.27, 8x240x28x28 1.14 -> 1.28); 3 wide of up to 32 channels
  // (as 7ac11ed's chunk pair: chunk-major, 8x32x112x112 ran at 0.58-0.64); 3 wide in cache
  // where a block's input, d.r rows of 6 pixels of k channels, fits half of L1 (1x144x56x56 0.75 ->
  // 0.96); and 3 wide streaming past the caches (8x144x56x56 1.10 -> 1.44, with bias and ReLU6
  // 0.94 -> 1.54). Other wider 3-wide layers ran slower so (1x480x14x14 on 2 threads 56 -> 66 us;
  // streaming through the caches, 8x480x14x14 1.10-1.15 -> 0.95-1.05). Under AVX-512, whose
  // chunk-major passes read whole lines, only layers that stream (Zen 4, 4dc2697: 8x144x56x56
  // 0.89 -> 1.44, with bias and ReLU6 0.89 -> 1.69; in cache, 5x5 layers ran 10-25 % slower), and
  // of up to 64 channels, which its chunk-major blocks take in one pass, only with an epilogue to
  // fold in (8x32x112x112 with bias and ReLU6 1.05 -> 1.49; plain, on 2 threads 1.23 -> 0.97).
  const bool block_in_l1 = d.r * (4 + 2) * d.k * std::int64_t{sizeof(float)} <= cache.l1 / 2;
  const bool has_epilogue = op.bias || op.residual || op.p.activation != Activation::None;
  const PixelMajorKernel& by_pixels = vk.depthwise_pixel_major;
  const bool pixel_major_fits = by_pixels.run && d.k % by_pixels.channels == 0 && op.p.stride[1] == 1 &&
                                op.p.dilation[1] == 1 && (d.s == 3 || d.s == 5);
  const bool pixel_major = pixel_major_fits && (by_pixels.in_cache
                                                    ? can_stream || d.s == 5 || d.k <= 32 || (!streams && block_in_l1)
                                                    : can_stream && (d.k > 64 || has_epilogue));
  // Streaming bands of stride 2 that are not pairs of rows stream chunk by chunk where the set has
  // such a kernel (AVX-512), over channels in whole vectors, each a cache line (Zen 4, 1 thread,
  // aeeacb1: 8x672x28x28 5x5 /2 0.96 -> 1.32, with bias and ReLU6 0.95 -> 1.33; 8x144x56x56
  // 5x5 /2 1.19 -> 1.21, with bias and ReLU6 1.11 -> 1.24).
  const bool stream_chunks = can_stream && vk.depthwise_rows_stride2_streamed && op.p.stride[1] == 2 &&
                             !row_pairs && d.k % 16 == 0;
  const bool stream = (pixel_major && can_stream) || stream_chunks;
  const DepthwiseRowsFn sweep = pixel_major     ? by_pixels.run
                                : stream_chunks ? vk.depthwise_rows_stride2_streamed
                                : op.p.stride[1] == 2 ? vk.depthwise_rows_stride2 : vk.depthwise_rows;
  // At least 4 tasks a thread to balance: bands split into groups of 64 channels, or into more
  // bands where too few channels remain.
  const std::int64_t min_tasks = threads == 1 ? 1 : 4 * threads;
  std::int64_t bands = ceil_div(d.p, band_rows);
  if (d.n * bands * chunks < min_tasks) bands = std::min(d.p, ceil_div(min_tasks, d.n * chunks));
  const std::int64_t rows_per_band = ceil_div(d.p, bands);
  bands = ceil_div(d.p, rows_per_band);
  const std::int64_t chunks_per_group =
      ceil_div(chunks, std::clamp<std::int64_t>(ceil_div(min_tasks, d.n * bands), 1, chunks));
  const std::int64_t groups = ceil_div(chunks, chunks_per_group), tasks_per_image = bands * groups;
  // Where a task is a whole band and the kernel has a vector chunk to run, it fetches the next
  // band's new input rows as it runs; then only a range's first task and an image's first band
  // ask for their own rows before they start.
  const bool fetch_next = streams && groups == 1 && d.k >= 16;
  const bool kernel_epilogue = exp_based || stream;
  const auto run = [&](const tbb::blocked_range<std::int64_t>& range) {
    std::vector<const float*> rows(static_cast<std::size_t>(rows_per_band * d.r));
    std::vector<const float*> ahead(static_cast<std::size_t>(rows_per_band * stride_h + span_h));
    for (std::int64_t task = range.begin(); task != range.end(); ++task) {
      const std::int64_t n = task / tasks_per_image, band = task % tasks_per_image / groups, group = task % groups;
      const std::int64_t oh0 = band * rows_per_band, out_rows = std::min(rows_per_band, d.p - oh0);
      const std::int64_t c_begin = group * chunks_per_group * 64;
      const std::int64_t c_end = std::min(d.k, c_begin + chunks_per_group * 64);
      for (std::int64_t i = 0; i < out_rows; ++i)
        for (std::int64_t r = 0; r < d.r; ++r) {
          const std::int64_t h = (oh0 + i) * stride_h - op.p.pad[0] + r * op.p.dilation[0];
          rows[static_cast<std::size_t>(i * d.r + r)] = h >= 0 && h < d.h ? op.x + (n * d.h + h) * d.w * d.c : nullptr;
        }
      if (streams && (!fetch_next || task == range.begin() || band == 0))
        for (const float* input_row : std::span(rows).first(static_cast<std::size_t>(out_rows * d.r)))
          if (input_row) prefetch_floats(input_row, d.w * d.c);
      // The input rows the image's next band reads and this one does not.
      std::int64_t ahead_count = 0;
      if (const std::int64_t next = oh0 + out_rows; fetch_next && next < d.p) {
        const std::int64_t next_end = std::min(d.p, next + rows_per_band);
        const std::int64_t first = std::max((next - 1) * stride_h + span_h, next * stride_h) - op.p.pad[0];
        const std::int64_t end = (next_end - 1) * stride_h + span_h - op.p.pad[0];
        for (std::int64_t h = std::max<std::int64_t>(first, 0); h < std::min(end, d.h); ++h)
          ahead[static_cast<std::size_t>(ahead_count++)] = op.x + (n * d.h + h) * d.w * d.c;
      }
      const std::int64_t y_index = (n * d.p + oh0) * d.q * d.k;
      const float* residual = op.residual ? op.residual + y_index : nullptr;
      const DepthwiseRows args{.taps = taps.data(), .k = d.k, .taps_h = d.r, .taps_w = d.s, .rows = rows.data(),
                               .out_rows = out_rows, .q = d.q, .c_begin = c_begin, .c_end = c_end, .width = d.w,
                               .stride = op.p.stride[1], .dilation = op.p.dilation[1], .pad_left = op.p.pad[1],
                               .bias = kernel_epilogue ? op.bias : nullptr,
                               .residual = kernel_epilogue ? residual : nullptr,
                               .act = kernel_epilogue ? op.p.activation : Activation::None, .ahead = ahead.data(),
                               .ahead_count = ahead_count, .row_pairs = row_pairs && rows_per_band > 1,
                               .stream = stream};
      float* y = op.y.data() + y_index;
      sweep(args, y);
      const std::int64_t pixels = out_rows * d.q, width = c_end - c_begin;
      if (!kernel_epilogue)
        finish(y + c_begin, residual ? residual + c_begin : nullptr, pixels, width, d.k,
               op.bias ? op.bias + c_begin : nullptr, op.p.activation);
      // The conversion to y's dtype over the channels computed.
      if (width == d.k) {
        op.y.commit(y_index, pixels * d.k);
      } else {
        for (std::int64_t px = 0; px < pixels; ++px) op.y.commit(y_index + px * d.k + c_begin, width);
      }
    }
  };
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, d.n * tasks_per_image), run);
}

// Which kernel runs a non-depthwise layer. PORTA_CPU_CONV overrides the heuristic: "direct",
// "winograd" (where it applies), or "measure": time both on the first prepare of each shape and
// thread count, and keep the faster for the process.
enum class Algorithm { Direct, Winograd };

std::string_view algorithm_setting() {
  const char* value = std::getenv("PORTA_CPU_CONV");
  const std::string_view setting = value ? value : "auto";
  if (setting != "auto" && setting != "direct" && setting != "winograd" && setting != "measure")
    throw Error(ErrorCode::InvalidArgument,
                "PORTA_CPU_CONV=" + std::string(setting) + ": expected auto, direct, winograd or measure");
  return setting;
}

// Without a measurement: Winograd where it applies and its transforms pay (winograd_preferred).
Algorithm heuristic(const ConvDims& d, const Conv2dParams& p, std::string_view setting) {
  if (!winograd_applies(d, p) || setting == "direct") return Algorithm::Direct;
  return setting == "winograd" || winograd_preferred(d) ? Algorithm::Winograd : Algorithm::Direct;
}

std::shared_ptr<const HostNodeState> packed_direct(const ConvDims& d, const Conv2dParams& p, const float* w) {
  auto packed = std::make_shared<NhwcFilters>();
  packed->kernel = &kernel_for(d, p);
  packed->panels = aligned_floats(static_cast<std::size_t>(packed_filters_size(d, packed->kernel->nr)));
  pack_filters(w, d, *packed->kernel, packed->panels.get());
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

}  // namespace

void cpu_conv2d_nhwc(const ConvOperands& op, const HostNodeState* prepared) {
  if (const auto* filters = dynamic_cast<const NhwcFilters*>(prepared))
    return conv_gemm(op, *filters->kernel, filters->panels.get());
  if (const auto* filters = dynamic_cast<const WinogradFilters*>(prepared)) return conv_winograd(op, filters);
  if (const auto* filters = dynamic_cast<const DepthwiseTaps*>(prepared)) return depthwise(op, filters->taps);
  if (is_depthwise(op.d)) return depthwise(op, depthwise_taps(op.w, op.d));
  if (heuristic(op.d, op.p, algorithm_setting()) == Algorithm::Winograd) return conv_winograd(op, nullptr);
  const MicroKernel& kernel = kernel_for(op.d, op.p);
  const auto packed = gemm_scratch().acquire(static_cast<std::size_t>(packed_filters_size(op.d, kernel.nr)));
  pack_filters(op.w, op.d, kernel, packed.data());
  conv_gemm(op, kernel, packed.data());
}

std::int64_t cpu_conv2d_nhwc_row_tile(const ConvDims& d, const Conv2dParams& p) { return kernel_for(d, p).mr; }

std::shared_ptr<const HostNodeState> cpu_prepare_conv2d_nhwc(const ConvDims& d, const Conv2dParams& p, const float* w) {
  if (is_depthwise(d)) {
    auto transposed = std::make_shared<DepthwiseTaps>();
    transposed->taps = depthwise_taps(w, d);
    return transposed;
  }
  const std::string_view setting = algorithm_setting();
  if (setting == "measure" && winograd_applies(d, p)) {
    const std::shared_ptr<const HostNodeState> candidates[] = {packed_direct(d, p, w),
                                                               std::make_shared<WinogradFilters>(d, w)};
    return candidates[measured_choice(d, p, candidates)];
  }
  if (heuristic(d, p, setting) == Algorithm::Winograd) return std::make_shared<WinogradFilters>(d, w);
  return packed_direct(d, p, w);
}

}  // namespace porta::detail
