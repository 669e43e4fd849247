#include <variant>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void opencl_softmax(LaunchBuilder& b, const Node& node) {
  const TensorDesc& x = b.desc(node.inputs[0]);
  const AxisSplit split = split_at_axis(x.shape, std::get<SoftmaxParams>(node.params).axis);
  auto args = b.kernel("softmax", "softmax", x.dtype);
  args.tensor(node.inputs[0]).tensor(node.output).i64(split.outer).i64(split.axis).i64(split.inner);
  b.enqueue_1d(std::move(args), split.outer * split.inner);
}

}  // namespace porta::detail
