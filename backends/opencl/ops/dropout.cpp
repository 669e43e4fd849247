// Launcher of kernels/dropout.cl.
#include <variant>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/dropout.hpp"

namespace porta::detail {

void opencl_dropout(LaunchBuilder& b, const Node& node) {
  const DropoutMask m = dropout_mask(std::get<DropoutParams>(node.params));
  const std::int64_t n = b.desc(node.output).numel();
  auto args = b.kernel("dropout", "dropout", b.desc(node.output).dtype);
  args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(node.output).i64(n).i64(static_cast<std::int64_t>(m.seed))
      .i32(static_cast<std::int32_t>(m.threshold)).f32(m.scale);
  b.enqueue_1d(std::move(args), n);
}

}  // namespace porta::detail
