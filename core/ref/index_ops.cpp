// Gather, comparisons, logical ops and where: element by element, through the broadcast maps.
#include <cstring>
#include <variant>

#include "core/ref/kernels.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void ref_gather(const HostOpArgs& args) {
  const HostTensor& data = args.inputs[0];
  const HostTensor& indices = args.inputs[1];
  const AxisSplit d = split_at_axis(data.shape(), std::get<GatherParams>(args.node.params).axis);
  const std::int64_t count = indices.numel();
  const std::size_t element = size_of(data.dtype());
  for (std::int64_t y = 0; y < args.output.numel(); ++y) {
    const std::int64_t inner = y % d.inner, j = y / d.inner % count, outer = y / d.inner / count;
    const std::int64_t at = gather_coordinate(load_as_i64(indices.data, j, indices.dtype()), d.axis, args.node);
    const std::int64_t x = (outer * d.axis + at) * d.inner + inner;
    std::memcpy(args.output.data + y * element, data.data + x * element, element);
  }
}

void ref_compare(const HostOpArgs& args) {
  const Comparison op = std::get<CompareParams>(args.node.params).op;
  const HostTensor& a = args.inputs[0];
  const HostTensor& b = args.inputs[1];
  const BroadcastIndex a_index(a.shape(), args.output.shape());
  const BroadcastIndex b_index(b.shape(), args.output.shape());
  const bool exact_ints = !is_float(a.dtype());  // i64 past 2^24 would round as float
  for (std::int64_t i = 0; i < args.output.numel(); ++i) {
    const auto ai = static_cast<std::size_t>(a_index(i)), bi = static_cast<std::size_t>(b_index(i));
    const bool holds = exact_ints ? compare(op, load_as_i64(a.data, ai, a.dtype()), load_as_i64(b.data, bi, b.dtype()))
                                  : compare(op, a.load(ai), b.load(bi));
    store_from_i64(args.output.data, static_cast<std::size_t>(i), DType::boolean, holds);
  }
}

void ref_logical(const HostOpArgs& args) {
  const LogicalOp op = std::get<LogicalParams>(args.node.params).op;
  const HostTensor& a = args.inputs[0];
  const HostTensor& b = args.inputs[args.inputs.size() - 1];  // a itself for not, which ignores it
  const BroadcastIndex a_index(a.shape(), args.output.shape());
  const BroadcastIndex b_index(b.shape(), args.output.shape());
  for (std::int64_t i = 0; i < args.output.numel(); ++i) {
    const bool av = load_as_i64(a.data, static_cast<std::size_t>(a_index(i)), DType::boolean) != 0;
    const bool bv = load_as_i64(b.data, static_cast<std::size_t>(b_index(i)), DType::boolean) != 0;
    store_from_i64(args.output.data, static_cast<std::size_t>(i), DType::boolean, logical(op, av, bv));
  }
}

void ref_where(const HostOpArgs& args) {
  const Shape& y_shape = args.output.shape();
  const BroadcastIndex cond_index(args.inputs[0].shape(), y_shape);
  const BroadcastIndex x_index(args.inputs[1].shape(), y_shape);
  const BroadcastIndex y_index(args.inputs[2].shape(), y_shape);
  const std::size_t element = size_of(args.output.dtype());
  for (std::int64_t i = 0; i < args.output.numel(); ++i) {
    const bool take_x = load_as_i64(args.inputs[0].data, static_cast<std::size_t>(cond_index(i)), DType::boolean) != 0;
    const std::byte* from = take_x ? args.inputs[1].data + x_index(i) * static_cast<std::int64_t>(element)
                                   : args.inputs[2].data + y_index(i) * static_cast<std::int64_t>(element);
    std::memcpy(args.output.data + i * static_cast<std::int64_t>(element), from, element);
  }
}

}  // namespace porta::detail
