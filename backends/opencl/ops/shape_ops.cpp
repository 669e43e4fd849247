#include <variant>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void opencl_reshape(LaunchBuilder& b, const Node& node) { b.copy(node.inputs[0], node.output); }

void opencl_transpose(LaunchBuilder& b, const Node& node) {
  const auto& perm = std::get<TransposeParams>(node.params).perm;
  const Shape x_strides = contiguous_strides(b.desc(node.inputs[0]).shape);
  Shape permuted(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) permuted[i] = x_strides[static_cast<std::size_t>(perm[i])];
  const TensorDesc& y = b.desc(node.output);
  auto args = b.kernel("shape_ops", "transpose", y.dtype);
  args.tensor(node.inputs[0]).tensor(node.output).i64(y.numel()).long8(to_long8(y.shape, 1)).long8(to_long8(permuted, 0));
  b.enqueue_1d(std::move(args), y.numel());
}

void opencl_concat(LaunchBuilder& b, const Node& node) {
  const std::int64_t axis = std::get<ConcatParams>(node.params).axis;
  const TensorDesc& y_desc = b.desc(node.output);
  const AxisSplit y = split_at_axis(y_desc.shape, axis);
  std::int64_t axis_offset = 0;  // where the current input starts along the concat axis
  for (const Tensor x : node.inputs) {
    const AxisSplit split = split_at_axis(b.desc(x).shape, axis);
    const std::int64_t block = split.axis * split.inner;
    auto args = b.kernel("shape_ops", "concat_part", y_desc.dtype);
    args.tensor(x).tensor(node.output).i64(split.outer).i64(block).i64(y.axis * y.inner).i64(axis_offset * y.inner);
    b.enqueue_1d(std::move(args), split.outer * block);
    axis_offset += split.axis;
  }
}

}  // namespace porta::detail
