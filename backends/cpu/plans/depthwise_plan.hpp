#pragma once
// How a depthwise layer (groups == C == K) runs on a given machine, decided before any work: the
// band kernel that sweeps it, whether it streams past the caches, where its epilogue runs, and
// how the image is cut into bands of output rows and groups of 64 channels. conv2d_nhwc.cpp
// makes the plan and runs it; tests check the plans of made-up machines.
#include <cstdint>
#include <string>

#include "backends/cpu/kernels/depthwise_finish.hpp"
#include "backends/cpu/plans/machine.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

// Facts of the operands that the plan depends on besides their shapes.
struct DepthwiseOperands {
  bool bias = false, residual = false;
  bool y_converts = false;  // y is stored in another dtype than f32
  bool y_aligned = true;    // y starts on a 64-byte boundary (a vector of any set)
};

// The band kernels (VectorKernels): by rows, by rows at stride 2, at stride 2 streamed chunk by
// chunk, or pixel-major.
enum class DepthwiseSweep { rows, rows_stride2, rows_stride2_streamed, pixel_major };

struct DepthwisePlan {
  DepthwiseSweep sweep = DepthwiseSweep::rows;
  bool streams = false;          // input and output come from and go to memory, not L3
  bool row_pairs = false;        // 3x3 /2 bands computed as pairs of rows sharing an input row
  DepthwiseFinish finish = DepthwiseFinish::after;  // where the kernel's sums go
  bool kernel_epilogue = false;  // the kernel applies bias, residual and activation
  bool fetch_next = false;       // a task fetches the next band's new input rows as it runs
  std::int64_t rows_per_band = 0, bands = 0;     // of an image's output rows
  std::int64_t chunks_per_group = 0, groups = 0;  // of 64 channels

  std::int64_t tasks_per_image() const { return bands * groups; }
};

DepthwisePlan plan_depthwise(const ConvDims& d, const Conv2dParams& p, const DepthwiseOperands& operands,
                             const Machine& machine);

// One line: "conv depthwise sweep=pixel_major bands=56x1 groups=3 stream".
std::string describe(const DepthwisePlan& plan);

}  // namespace porta::detail
