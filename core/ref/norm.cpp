#include <cmath>
#include <variant>

#include "core/ref/kernels.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

// Each row of `n` elements from `axis` on, in double, two passes: the mean, then the spread about it.
void normalise(const HostOpArgs& args, bool rms) {
  const HostTensor& x = args.inputs[0];
  const HostTensor& scale = args.inputs[1];
  const HostTensor* bias = args.inputs.size() > 2 ? &args.inputs[2] : nullptr;
  const auto& p = std::get<NormParams>(args.node.params);
  const AxisSplit rows = norm_rows(x.shape(), p.axis);
  const std::int64_t n = rows.axis;
  for (std::int64_t row = 0; row < rows.outer; ++row) {
    const std::int64_t first = row * n;
    double mean = 0.0;
    if (!rms) {
      for (std::int64_t i = 0; i < n; ++i) mean += x.load(first + i);
      mean /= static_cast<double>(n);
    }
    double spread = 0.0;
    for (std::int64_t i = 0; i < n; ++i) spread += (x.load(first + i) - mean) * (x.load(first + i) - mean);
    const double inv = 1.0 / std::sqrt(spread / static_cast<double>(n) + p.epsilon);
    for (std::int64_t i = 0; i < n; ++i) {
      const double y = (x.load(first + i) - mean) * inv * scale.load(i) + (bias ? bias->load(i) : 0.0);
      args.output.store(first + i, static_cast<float>(y));
    }
  }
}

}  // namespace

void ref_layer_norm(const HostOpArgs& args) { normalise(args, false); }
void ref_rms_norm(const HostOpArgs& args) { normalise(args, true); }

}  // namespace porta::detail
