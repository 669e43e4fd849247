#include <variant>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void opencl_batchnorm(LaunchBuilder& b, const Node& node) {
  const TensorDesc& x = b.desc(node.inputs[0]);
  const AxisSplit split = split_at_axis(x.shape, 1);
  auto args = b.kernel("batchnorm", "batchnorm", x.dtype);
  for (const Tensor t : node.inputs) args.tensor(t);  // x, scale, bias, mean, var
  args.tensor(node.output).i64(x.numel()).i64(split.axis).i64(split.inner)
      .f32(std::get<BatchNormParams>(node.params).epsilon);
  b.enqueue_1d(std::move(args), x.numel());
}

}  // namespace porta::detail
