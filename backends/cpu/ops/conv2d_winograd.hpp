#pragma once
// Winograd F(4x4, 3x3) for channels-last 3x3 stride-1 convolutions (conv2d_winograd.cpp).
#include <cstdint>
#include <memory>

#include "backends/cpu/kernels/scratch_pool.hpp"
#include "backends/cpu/ops/conv2d_nhwc.hpp"

namespace porta::detail {

// Whether a layer has the geometry F(4x4, 3x3) computes: channels-last, one group, 3x3 filters,
// stride 1, no dilation.
bool winograd_applies(const ConvDims& d, const Conv2dParams& p);

// Whether a layer where it applies runs faster with it than with the direct kernel, by its shape.
bool winograd_preferred(const ConvDims& d);

// Filters transformed (G g G^T) into the micro-kernel's B panels, once per graph where constant.
struct WinogradFilters final : HostNodeState {
  explicit WinogradFilters(const ConvDims& d, const float* w);
  AlignedFloats panels;
};

// `filters` made for op.d, or null to transform op.w on this run.
void conv_winograd(const ConvOperands& op, const WinogradFilters* filters);

}  // namespace porta::detail
