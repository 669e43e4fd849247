#include <variant>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

// Layer and RMS normalisation; without a bias the kernel is handed the scale again, unread.
void opencl_norm(LaunchBuilder& b, const Node& node) {
  const TensorDesc& x = b.desc(node.inputs[0]);
  const auto& p = std::get<NormParams>(node.params);
  const AxisSplit rows = norm_rows(x.shape, p.axis);
  const bool has_bias = node.inputs.size() > 2;
  auto args = b.kernel("norm", "normalise", x.dtype);
  args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(node.inputs[has_bias ? 2 : 1]).tensor(node.output)
      .i64(rows.outer).i64(rows.axis).f32(p.epsilon).i32(node.op == OpKind::RmsNorm ? 1 : 0).i32(has_bias ? 1 : 0);
  b.enqueue_1d(std::move(args), rows.outer);
}

}  // namespace porta::detail
