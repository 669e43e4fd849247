#pragma once
// Where a depthwise band kernel's sums go (DepthwiseRows::finish), in a header of its own so that
// the plans name it without the kernels.
#include <cstdint>

namespace porta::detail {

// `after`: stored as they are, the epilogue applied after them (on each row while it is in L1, or
// in the caller's pass over the band). `in_registers`: the epilogue (act None, Relu or Relu6, bias,
// residual) applied to each block's sums in registers, then stored, with no pass over y after (the
// plan's choice for such an epilogue wherever the sums do not go past the caches, but for pairs of
// rows: README.md beside depthwise_plan.cpp, `finish_in_registers`). `streamed`: the same, written
// past the caches (stream_vector), where an ordinary store would first read each line of y from
// memory, a third of a streaming stride-1 layer's traffic; y aligned to a vector, for the kernels
// that stream (pixel-major, and AVX-512's chunk-major one at stride 2).
enum class DepthwiseFinish : std::uint8_t { after, in_registers, streamed };

}  // namespace porta::detail
