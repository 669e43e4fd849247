#include <algorithm>
#include <cmath>
#include <limits>
#include <variant>

#include "core/ref/kernels.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void ref_softmax(const HostOpArgs& args) {
  const HostTensor& x = args.inputs[0];
  const std::int64_t axis = std::get<SoftmaxParams>(args.node.params).axis;
  const AxisSplit split = split_at_axis(x.shape(), axis);
  for (std::int64_t outer = 0; outer < split.outer; ++outer) {
    for (std::int64_t inner = 0; inner < split.inner; ++inner) {
      const std::int64_t first = outer * split.axis * split.inner + inner;
      const auto at = [&](std::int64_t a) { return first + a * split.inner; };
      // Subtracting the maximum keeps exp from overflowing; the result is unchanged.
      double max = -std::numeric_limits<double>::infinity();
      for (std::int64_t a = 0; a < split.axis; ++a) max = std::max(max, double{x.load(at(a))});
      double sum = 0.0;
      for (std::int64_t a = 0; a < split.axis; ++a) sum += std::exp(x.load(at(a)) - max);
      for (std::int64_t a = 0; a < split.axis; ++a) {
        args.output.store(at(a), static_cast<float>(std::exp(x.load(at(a)) - max) / sum));
      }
    }
  }
}

}  // namespace porta::detail
