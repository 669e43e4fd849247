#include <variant>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void opencl_reshape(LaunchBuilder& b, const Node& node) { b.copy(node.inputs[0], node.output); }

void opencl_strided_gather(LaunchBuilder& b, const Node& node) {
  const StridedView view = strided_view(node, b.desc(node.inputs[0]).shape);
  const TensorDesc& y = b.desc(node.output);
  auto args = b.kernel("shape_ops", "strided_gather", y.dtype);
  args.tensor(node.inputs[0]).tensor(node.output).i64(y.numel()).long8(to_long8(y.shape, 1))
      .long8(to_long8(view.stride, 0)).i64(view.offset);
  b.enqueue_1d(std::move(args), y.numel());
}

void opencl_pad(LaunchBuilder& b, const Node& node) {
  const auto& p = std::get<PadParams>(node.params);
  const TensorDesc& y = b.desc(node.output);
  const Shape begin(p.pads.begin(), p.pads.begin() + static_cast<std::ptrdiff_t>(y.shape.size()));
  auto args = b.kernel("shape_ops", "pad", y.dtype);
  args.tensor(node.inputs[0]).tensor(node.output).i64(y.numel()).long8(to_long8(y.shape, 1))
      .long8(to_long8(b.desc(node.inputs[0]).shape, 1)).long8(to_long8(begin, 0))
      .i32(static_cast<std::int32_t>(p.mode)).i64(static_cast<std::int64_t>(storage_bits(p.value, y.dtype)));
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
