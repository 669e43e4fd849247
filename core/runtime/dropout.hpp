#pragma once
// What a dropout node's kernels need from its parameters, computed once on the host so that every
// device keeps the same elements and scales them by the same float (backends/common/philox.h).
#include <cmath>
#include <cstdint>

#include "porta/ops.hpp"

namespace porta::detail {

struct DropoutMask {
  std::uint64_t seed = 0;
  std::uint32_t threshold = 0;  // an element is kept where its 32 random bits are at least this
  float scale = 1.0f;           // 1 / (1 - ratio), applied to the kept elements
};

// The builder keeps ratio in [0, 1), so ratio * 2^32 stays below 2^32.
inline DropoutMask dropout_mask(const DropoutParams& p) {
  return {p.seed, static_cast<std::uint32_t>(std::llround(double{p.ratio} * 4294967296.0)),
          static_cast<float>(1.0 / (1.0 - double{p.ratio}))};
}

}  // namespace porta::detail
