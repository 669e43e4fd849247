#pragma once
// What conv2d.cpp gathers once for either layout, and the NHWC convolution it hands those nodes to.
#include <cstdint>

#include "backends/cpu/ops/tensor_io.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

struct ConvOperands {
  const ConvDims& d;
  const Conv2dParams& p;
  const float* x;
  const float* w;         // nullptr when the filters were packed at prepare
  const float* bias;      // nullptr without a bias
  const float* residual;  // nullptr without a residual; else shaped like y
  const F32Output& y;

  float bias_of(std::int64_t k) const { return bias ? bias[k] : 0.0f; }
};

// `prepared` is what cpu_prepare_conv2d_nhwc returned, or null.
void cpu_conv2d_nhwc(const ConvOperands& op, const HostNodeState* prepared);
// Output pixels per micro-kernel tile: a tile reads its rows' input even past the last column.
std::int64_t cpu_conv2d_nhwc_row_tile(const ConvDims& d, const Conv2dParams& p);
// Constant filters (in f32) prepared once for the layer's algorithm: packed for the direct kernel,
// transformed for Winograd, or transposed for a depthwise conv.
std::shared_ptr<const HostNodeState> cpu_prepare_conv2d_nhwc(const ConvDims& d, const Conv2dParams& p, const float* w);

}  // namespace porta::detail
