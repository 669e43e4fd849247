// Gather, comparisons, logical ops and where (kernels/index_ops.cl).
#include <variant>
#include <vector>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

Long8 broadcast_strides(const Shape& operand, const Shape& result) {
  Shape strides(result.size(), 0);
  const std::size_t lead = result.size() - operand.size();
  std::int64_t stride = 1;
  for (std::size_t i = operand.size(); i-- > 0;) {
    strides[lead + i] = operand[i] == 1 ? 0 : stride;
    stride *= operand[i];
  }
  return to_long8(strides, 0);
}

namespace {

// A kernel over the output's elements whose tensor operands broadcast to it: out, n, op (where given),
// the output's shape and each operand's strides.
void enqueue_broadcast(LaunchBuilder& b, const Node& node, std::string_view kernel, DType storage,
                       std::vector<Tensor> operands, const std::int32_t* op) {
  const TensorDesc& y = b.desc(node.output);
  auto args = b.kernel("index_ops", kernel, storage);
  for (const Tensor t : operands) args.tensor(t);
  args.tensor(node.output).i64(y.numel());
  if (op != nullptr) args.i32(*op);
  args.long8(to_long8(y.shape, 1));
  for (const Tensor t : operands) args.long8(broadcast_strides(b.desc(t).shape, y.shape));
  b.enqueue_1d(std::move(args), y.numel());
}

}  // namespace

// The indices are checked on the host first (LaunchBuilder::check_indices): an index out of range
// throws, naming the node, before any element is gathered. Indices are few; the data is not read.
void opencl_gather(LaunchBuilder& b, const Node& node) {
  const Tensor data = node.inputs[0], indices = node.inputs[1];
  const AxisSplit d = split_at_axis(b.desc(data).shape, std::get<GatherParams>(node.params).axis);
  const TensorDesc& index_desc = b.desc(indices);
  b.check_indices(indices, [&node, extent = d.axis](std::int64_t index) { gather_coordinate(index, extent, node); });
  const TensorDesc& y = b.desc(node.output);
  auto args = b.kernel("index_ops", "gather", y.dtype);
  args.tensor(data).tensor(indices).tensor(node.output).i64(y.numel()).i64(index_desc.numel()).i64(d.axis)
      .i64(d.inner).i32(index_desc.dtype == DType::i64 ? 1 : 0);
  b.enqueue_1d(std::move(args), y.numel());
}

void opencl_compare(LaunchBuilder& b, const Node& node) {
  const auto op = static_cast<std::int32_t>(std::get<CompareParams>(node.params).op);
  enqueue_broadcast(b, node, "compare", b.desc(node.inputs[0]).dtype, node.inputs, &op);
}

void opencl_logical(LaunchBuilder& b, const Node& node) {
  const auto op = static_cast<std::int32_t>(std::get<LogicalParams>(node.params).op);
  const Tensor a = node.inputs[0], other = node.inputs.back();  // not reads a twice and ignores the second
  enqueue_broadcast(b, node, "logical", DType::boolean, {a, other}, &op);
}

void opencl_where(LaunchBuilder& b, const Node& node) {
  enqueue_broadcast(b, node, "where_select", b.desc(node.output).dtype, node.inputs, nullptr);
}

}  // namespace porta::detail
