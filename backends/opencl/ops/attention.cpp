#include <variant>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

// Without a mask the kernel is handed q in its place, unread.
void opencl_attention(LaunchBuilder& b, const Node& node) {
  const TensorDesc& q = b.desc(node.inputs[0]);
  const bool has_mask = node.inputs.size() > 3;
  const Shape* mask = has_mask ? &b.desc(node.inputs[3]).shape : nullptr;
  const AttentionDims d = attention_dims(std::get<AttentionParams>(node.params), q.shape, b.desc(node.inputs[2]).shape, mask);
  constexpr std::int64_t slice = 16;  // ATTENTION_SLICE of kernels/attention.cl
  auto args = b.kernel("attention", "attention", q.dtype);
  args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(node.inputs[2]).tensor(node.inputs[has_mask ? 3 : 0])
      .tensor(node.output).i64(d.problems()).i64(d.heads).i64(d.queries).i64(d.keys).i64(d.depth).i64(d.width)
      .f32(d.scale).i32(d.causal ? 1 : 0).i32(has_mask ? 1 : 0)
      .i64(d.mask_stride[0]).i64(d.mask_stride[1]).i64(d.mask_stride[2]).i64(d.mask_stride[3]);
  b.enqueue_1d(std::move(args), d.problems() * d.queries * ceil_div(d.width, slice));
}

}  // namespace porta::detail
