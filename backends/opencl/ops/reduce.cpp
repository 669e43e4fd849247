#include <variant>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void opencl_reduce(LaunchBuilder& b, const Node& node) {
  const TensorDesc& x = b.desc(node.inputs[0]);
  const auto& p = std::get<ReduceParams>(node.params);
  const ReduceSplit s = reduce_split(x.shape, p.axes);
  const bool contiguous = s.reduced_extent.size() == 1 && s.reduced_stride[0] == 1;
  auto args = b.kernel("reduce", "reduce", x.dtype);
  // REDUCE_* of kernels/reduce.cl number the reductions as porta::Reduction.
  args.tensor(node.inputs[0]).tensor(node.output).i64(s.kept_count).i64(s.reduced_count)
      .i32(static_cast<std::int32_t>(p.op)).i32(contiguous ? 1 : 0)
      .long8(to_long8(s.kept_extent, 1)).long8(to_long8(s.kept_stride, 0))
      .long8(to_long8(s.reduced_extent, 1)).long8(to_long8(s.reduced_stride, 0));
  b.enqueue_1d(std::move(args), s.kept_count);
}

}  // namespace porta::detail
