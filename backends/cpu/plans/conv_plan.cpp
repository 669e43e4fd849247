// The rules of the channels-last convolution's plan, each with the reason in a line; the
// measurements behind them are in README.md beside this file, under the rule's name.
#include "backends/cpu/plans/conv_plan.hpp"

#include <algorithm>
#include <limits>

#include "backends/cpu/kernels/micro_kernel.hpp"
#include "backends/cpu/ops/conv2d_winograd.hpp"

namespace porta::detail {
namespace {

constexpr std::int64_t f32_bytes = sizeof(float);

// Pointwise (1x1, unpadded, any stride): A's rows are the input's pixels, every one or every
// stride-th.
bool is_pointwise(const ConvDims& d, const Conv2dParams& p) {
  return d.r == 1 && d.s == 1 && std::ranges::all_of(p.pad, [](std::int64_t v) { return v == 0; });
}

// Whether the input, read in place as one segment, is larger than an eighth of L3, and so comes
// from L3 or memory: the micro-kernel then streams it (README.md, `stream_input`).
bool input_streams(const ConvDims& d, const ConvRows& rows, const CacheSizes& cache) {
  const std::int64_t input_bytes = d.n * d.h * d.w * d.c * f32_bytes;
  return rows.in_place && rows.segments == 1 && input_bytes > cache.l3 / 8;
}

// A task takes as many filter panels as fit a quarter of L2, at least 4 (README.md,
// `panels_per_task`): fewer tasks then read each tile's rows, and y is written in longer runs.
void cut_panels(ConvPlan& plan, const ConvDims& d, const Machine& machine) {
  const std::int64_t nr = plan.kernel->nr, depth = d.c_per_group * d.r * d.s;
  plan.panels = ceil_div(d.k_per_group, nr);
  const std::int64_t panel_bytes = depth * nr * f32_bytes;
  plan.panels_per_task = std::clamp(machine.cache.l2 / 4 / panel_bytes, std::min<std::int64_t>(plan.panels, 4),
                                    plan.panels);
  plan.panel_blocks = ceil_div(plan.panels, plan.panels_per_task);
}

// Up to 4 register tiles of pixels a task (8 of tiles under 8 rows), fewer where that would leave
// the threads fewer than 6 tasks each to balance (README.md, `tiles_per_task`).
void cut_tiles(ConvPlan& plan, const ConvDims& d, const Machine& machine) {
  const std::int64_t mr = plan.kernel->mr;
  plan.tiles = ceil_div(plan.rows.pixels, mr);
  const std::int64_t other_units = plan.images * plan.rows.segments * d.groups * plan.panel_blocks;
  plan.tiles_per_task = std::min<std::int64_t>(plan.tiles, mr < 8 ? 8 : 4);
  while (plan.tiles_per_task > 1 && ceil_div(plan.tiles, plan.tiles_per_task) * other_units < 6 * machine.threads)
    --plan.tiles_per_task;
  plan.tile_blocks = ceil_div(plan.tiles, plan.tiles_per_task);
}

// Sizes that saturate rather than overflow: a window absurdly larger than the image, which
// sparse_window (ops/conv2d.cpp) sends to the plain loop after asking this plan for its tile, need
// only compare as huge.
constexpr std::int64_t huge = std::numeric_limits<std::int64_t>::max();
std::int64_t times(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? huge : r;
}
std::int64_t plus(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? huge : r;
}

}  // namespace

ConvAlgorithm conv_algorithm(const ConvDims& d, const Conv2dParams& p, std::string_view setting) {
  if (d.groups == d.c && d.groups == d.k) return ConvAlgorithm::depthwise;
  if (!winograd_applies(d, p) || setting == "direct") return ConvAlgorithm::direct;
  return setting == "winograd" || winograd_preferred(d) ? ConvAlgorithm::winograd : ConvAlgorithm::direct;
}

// A pointwise layer reads the input in place where it can: strided, where the kernel's tiles fill
// an output row, and not where its rows would crowd an L1 set (README.md, `in_place`).
// Its sizes saturate rather than overflow (`times`, `plus`).
ConvRows conv_rows(const ConvDims& d, const Conv2dParams& p, std::int64_t mr) {
  ConvRows rows{};
  const bool unit = p.stride[0] == 1 && p.stride[1] == 1;
  const bool pointwise = is_pointwise(d, p);
  rows.in_place = pointwise && (unit || d.q % mr == 0) && !rows_alias_in_l1(mr, times(p.stride[1], d.c));
  const bool subsampled = pointwise && !unit && !rows.in_place;
  const bool dense = unit || subsampled;  // A's rows follow each other in the source
  const std::int64_t row_step = dense ? 1 : p.stride[1];
  // Rows that crowd into too few L1 sets are spaced out in the copy (a filter row of taps is then
  // no longer one contiguous run).
  const bool alias = !rows.in_place && rows_alias_in_l1(mr, times(row_step, d.c));
  rows.step_h = subsampled ? p.stride[0] : 1;
  rows.step_w = subsampled ? p.stride[1] : 1;
  // Only the window the taps reach: padding past it (or rows a large stride skips at the
  // bottom) is never read.
  const auto span = [&](std::int64_t outputs, std::int64_t stride, std::int64_t taps, std::int64_t dilation) {
    return plus(plus(times(outputs - 1, stride), times(taps - 1, dilation)), 1);
  };
  rows.hp = rows.in_place ? d.h : subsampled ? d.p : span(d.p, p.stride[0], d.r, p.dilation[0]);
  rows.wp = rows.in_place ? d.w : subsampled ? d.q : span(d.q, p.stride[1], d.s, p.dilation[1]);
  rows.segments = dense ? 1 : d.p;
  rows.pixels = dense ? plus(times(d.p - 1, rows.wp), d.q) : d.q;
  rows.pixel = alias ? d.c + 16 : d.c;
  rows.lda = times(row_step, rows.pixel);
  rows.image_floats = times(plus(times(rows.hp, rows.wp), rows.in_place ? 0 : times(mr, row_step)), rows.pixel);
  return rows;
}

// The kernel that computes the fewest padding rows and columns (KernelSet::for_filters_of), its
// rows counted as the GEMM kernel would read them; a 1x1 layer whose rows would crowd that
// kernel's L1 sets takes the GEMM's kernel for such rows and reads them in place (README.md,
// `conv_kernel`).
const MicroKernel& conv_kernel(const ConvDims& d, const Conv2dParams& p, const Machine& machine) {
  const KernelSet& set = kernel_set(machine.isa);
  const bool pointwise = is_pointwise(d, p);
  const ConvRows rows = conv_rows(d, p, set.wide.mr);
  const MicroKernel& kernel =
      set.for_filters_of(d.k_per_group, rows.pixels, pointwise, input_streams(d, rows, machine.cache));
  if (pointwise && rows_alias_in_l1(kernel.mr, times(p.stride[1], d.c))) {
    const MicroKernel& fewer_rows = set.for_columns(d.k_per_group, true);
    if (conv_rows(d, p, fewer_rows.mr).in_place) return fewer_rows;
  }
  return kernel;
}

ConvPlan plan_conv(const ConvDims& d, const Conv2dParams& p, const Machine& machine) {
  ConvPlan plan;
  plan.kernel = &conv_kernel(d, p, machine);
  plan.rows = conv_rows(d, p, plan.kernel->mr);
  const ConvRows& rows = plan.rows;
  plan.row_runs = d.groups == 1 && p.dilation[1] == 1 && rows.pixel == d.c;
  plan.tap_depth = plan.row_runs ? d.s * d.c : d.c_per_group;
  // Slices as deep as the GEMM's: each one more is a pass over the tile's sums in y (README.md, `kc`).
  plan.kc = max_depth_slice;
  // As many images per copy as fit in L2 (at least one), so that the copy is still cached when the
  // GEMM reads it; in place, every image at once.
  const std::int64_t l2_floats = machine.cache.l2 / f32_bytes;
  plan.images = rows.in_place ? d.n : std::clamp<std::int64_t>(l2_floats / rows.image_floats, 1, d.n);
  cut_panels(plan, d, machine);
  cut_tiles(plan, d, machine);
  // Not where each output row is a segment: the next tile's rows at a segment's end are rows it skips.
  plan.stream_input = input_streams(d, rows, machine.cache);
  plan.rows_are_pixels = rows.segments > 1 || rows.wp == d.q;
  plan.activation_in_kernel = TileEpilogue::fusable(p.activation);
  return plan;
}

std::string describe(const ConvPlan& plan) {
  const ConvRows& rows = plan.rows;
  std::string line = "conv direct kernel=" + kernel_name(*plan.kernel);
  line += std::string(" a=") + (rows.in_place ? "in_place" : rows.step_w > 1 ? "subsampled" : "copy");
  line += " tiles=" + std::to_string(plan.tiles_per_task) + "/task panels=" + std::to_string(plan.panels_per_task) +
          "/task images=" + std::to_string(plan.images);
  if (plan.stream_input) line += " stream";
  return line;
}

}  // namespace porta::detail
