#pragma once
// How the channels-last convolution computes a layer of a given shape on a given machine,
// decided before any work: the algorithm, the micro-kernel, where A's rows come from, and how the
// work is cut into tasks. conv2d_nhwc.cpp makes the plan and runs it; tests check the plans of
// made-up machines. The depthwise layers' plan is depthwise_plan.hpp's.
#include <cstdint>
#include <string>
#include <string_view>

#include "backends/cpu/plans/machine.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

struct MicroKernel;

enum class ConvAlgorithm { direct, winograd, depthwise };

// Which algorithm runs a layer without a measurement. `setting` is PORTA_CPU_CONV's: "auto" (the
// heuristic: Winograd where it applies and its transforms pay), "direct" or "winograd" (where
// it applies); "measure" decides at prepare and is "auto" here.
ConvAlgorithm conv_algorithm(const ConvDims& d, const Conv2dParams& p, std::string_view setting);

// Where the direct convolution's A rows are, one per output pixel. The padded image is [hp][wp]
// pixels of C channels, `pixel` floats apart. With stride 1 an image is one segment whose pixel
// j is output (j / wp, j % wp), kept when j % wp < Q: every tap is then one shift of the same rows.
// Otherwise each output row is a segment of Q pixels, sw pixels apart. A pointwise layer (1x1, no
// padding) reads the input itself where it can (`in_place`); a strided one not read in place
// copies only the pixels it reads, [P][Q], and is then read like a pointwise one.
struct ConvRows {
  bool in_place;
  std::int64_t hp, wp;
  std::int64_t step_h, step_w;    // input pixels between neighbouring pixels of the copy
  std::int64_t segments, pixels;  // per image; pixels per segment
  std::int64_t pixel;             // floats between neighbouring pixels of the source
  std::int64_t lda;               // floats between consecutive rows of A
  std::int64_t image_floats;      // per image, copies with room for the last tile's overhang
};

// The direct convolution's plan.
struct ConvPlan {
  const MicroKernel* kernel = nullptr;
  ConvRows rows{};
  bool row_runs = false;       // a filter row of taps is one run of the input (one tap per filter row)
  std::int64_t tap_depth = 0;  // depth of one tap: s * c where row_runs, else c per group
  std::int64_t kc = 0;         // depth of a micro-kernel call's slice
  std::int64_t images = 0;     // copied at a time (all of them where read in place)
  std::int64_t panels = 0, panels_per_task = 0, panel_blocks = 0;  // of nr filters, per group
  std::int64_t tiles = 0, tiles_per_task = 0, tile_blocks = 0;     // of mr rows, per segment
  bool stream_input = false;   // the first panel's kernel streams A from memory, fetching ahead
  bool rows_are_pixels = false;  // every row of a whole tile an output pixel, d.k floats on in y
  bool activation_in_kernel = false;  // the activation is a clamp the micro-kernel applies

  std::int64_t tasks_per_copy(const ConvDims& d, std::int64_t count) const {
    return count * rows.segments * d.groups * tile_blocks * panel_blocks;
  }
};

// The micro-kernel of a direct layer: the one whose filters are packed at prepare.
const MicroKernel& conv_kernel(const ConvDims& d, const Conv2dParams& p, const Machine& machine);
// The direct convolution's plan of a layer (not depthwise) on `machine`.
ConvPlan plan_conv(const ConvDims& d, const Conv2dParams& p, const Machine& machine);
// Rows of A for tiles of `mr` rows.
ConvRows conv_rows(const ConvDims& d, const Conv2dParams& p, std::int64_t mr);

// One line: "conv direct kernel=avx512 14x32 a=in_place tiles=4/task panels=2/task images=8 stream".
std::string describe(const ConvPlan& plan);

}  // namespace porta::detail
