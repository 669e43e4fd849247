#pragma once
// What a dropout node's kernels need from its parameters, computed once on the host so that every
// device keeps the same elements and scales them by the same float (backends/common/philox.h).
#include <cmath>
#include <cstdint>

#include "porta/ops.hpp"
#include "porta/tensor.hpp"

namespace porta::detail {

// DropoutParams::batch_offset's bound, so that its draws' index stays within 64 bits.
inline constexpr std::int64_t max_batch_offset = (std::int64_t{1} << 31) - 1;

struct DropoutMask {
  std::uint64_t seed = 0;
  std::uint32_t threshold = 0;  // an element is kept where its 32 random bits are at least this
  float scale = 1.0f;           // 1 / (1 - ratio), applied to the kept elements
  std::uint64_t span = 1;       // consecutive elements that share one draw: those of the dims past mask_dims
  std::uint64_t offset = 0;     // element 0's draw: those of the larger batch's samples before batch_offset
};

// The builder keeps ratio in [0, 1), so ratio * 2^32 stays below 2^32, mask_dims in -1 .. rank and
// batch_offset at 0 or above. A sample of x (an index of dim 0) draws as many
// draws as the mask has indices in dims 1 .. mask_dims - 1, every dim's at -1; mask_dims 0 draws one for
// the whole batch, draw 0 wherever the shard starts.
inline DropoutMask dropout_mask(const DropoutParams& p, const Shape& shape) {
  const auto rank = static_cast<std::int32_t>(shape.size());
  const std::int32_t mask_dims = p.mask_dims < 0 ? rank : p.mask_dims;
  std::uint64_t span = 1, per_sample = 1;
  for (std::int32_t d = 0; d < rank; ++d) {
    const auto extent = static_cast<std::uint64_t>(shape[static_cast<std::size_t>(d)]);
    if (d >= mask_dims) span *= extent;
    else if (d >= 1) per_sample *= extent;
  }
  const std::uint64_t offset = mask_dims == 0 ? 0 : static_cast<std::uint64_t>(p.batch_offset) * per_sample;
  return {p.seed, static_cast<std::uint32_t>(std::llround(double{p.ratio} * 4294967296.0)),
          static_cast<float>(1.0 / (1.0 - double{p.ratio})), span == 0 ? 1 : span, offset};
}

}  // namespace porta::detail
