#pragma once
// What a dropout node's kernels need from its parameters, computed once on the host so that every
// device keeps the same elements and scales them by the same float (backends/common/philox.h).
#include <cmath>
#include <cstdint>

#include "porta/ops.hpp"
#include "porta/tensor.hpp"

namespace porta::detail {

struct DropoutMask {
  std::uint64_t seed = 0;
  std::uint32_t threshold = 0;  // an element is kept where its 32 random bits are at least this
  float scale = 1.0f;           // 1 / (1 - ratio), applied to the kept elements
  std::uint64_t span = 1;       // consecutive elements that share one draw: those of the dims past mask_dims
};

// The builder keeps ratio in [0, 1), so ratio * 2^32 stays below 2^32, and mask_dims in -1 .. rank.
inline DropoutMask dropout_mask(const DropoutParams& p, const Shape& shape) {
  std::uint64_t span = 1;
  if (p.mask_dims >= 0)
    for (std::size_t d = static_cast<std::size_t>(p.mask_dims); d < shape.size(); ++d)
      span *= static_cast<std::uint64_t>(shape[d]);
  return {p.seed, static_cast<std::uint32_t>(std::llround(double{p.ratio} * 4294967296.0)),
          static_cast<float>(1.0 / (1.0 - double{p.ratio})), span == 0 ? 1 : span};
}

}  // namespace porta::detail
