#include <cmath>
#include <variant>

#include "core/ref/kernels.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void ref_batchnorm(const HostOpArgs& args) {
  const double epsilon = std::get<BatchNormParams>(args.node.params).epsilon;
  const HostTensor& x = args.inputs[0];
  const HostTensor& scale = args.inputs[1];
  const HostTensor& bias = args.inputs[2];
  const HostTensor& mean = args.inputs[3];
  const HostTensor& var = args.inputs[4];
  const AxisSplit split = split_at_axis(x.shape(), 1);

  std::int64_t i = 0;
  for (std::int64_t outer = 0; outer < split.outer; ++outer) {
    for (std::int64_t c = 0; c < split.axis; ++c) {
      const double m = mean.load(c);
      const double stddev = std::sqrt(double{var.load(c)} + epsilon);
      const double s = scale.load(c);
      const double b = bias.load(c);
      for (std::int64_t inner = 0; inner < split.inner; ++inner, ++i) {
        args.output.store(i, static_cast<float>(s * (x.load(i) - m) / stddev + b));
      }
    }
  }
}

}  // namespace porta::detail
