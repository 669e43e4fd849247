// Launcher of kernels/dropout.cl: a work-item per four elements.
#include <variant>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/dropout.hpp"

namespace porta::detail {

void opencl_dropout(LaunchBuilder& b, const Node& node) {
  const TensorDesc& y = b.desc(node.output);
  const DropoutMask m = dropout_mask(std::get<DropoutParams>(node.params), y.shape);
  const std::int64_t n = y.numel();
  auto args = b.kernel("dropout", "dropout", y.dtype);
  args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(node.output).i64(n).i64(static_cast<std::int64_t>(m.seed))
      .i32(static_cast<std::int32_t>(m.threshold)).f32(m.scale).i64(static_cast<std::int64_t>(m.span))
      .i64(static_cast<std::int64_t>(m.offset));
  b.enqueue_1d(std::move(args), (n + 3) / 4);
}

}  // namespace porta::detail
