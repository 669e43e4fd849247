#include <variant>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

// The arguments max and average pooling share: the tensors, the dimensions and the window up to
// the top and left padding.
KernelArgs window_args(LaunchBuilder& b, const Node& node, std::string_view kernel, const PoolDims& d) {
  const auto& p = std::get<Pool2dParams>(node.params);
  auto args = b.kernel("pool", kernel, b.desc(node.output).dtype);
  args.tensor(node.inputs[0]).tensor(node.output).i64(d.n * d.c).i64(d.h).i64(d.w).i64(d.p).i64(d.q)
      .i64(p.kernel[0]).i64(p.kernel[1]).i64(p.stride[0]).i64(p.stride[1]).i64(p.pad[0]).i64(p.pad[1]);
  return args;
}

}  // namespace

void opencl_max_pool2d(LaunchBuilder& b, const Node& node) {
  const auto& p = std::get<Pool2dParams>(node.params);
  const PoolDims d = pool_dims(b.desc(node.inputs[0]).shape, p);
  auto args = window_args(b, node, "max_pool2d", d);
  args.i64(p.dilation[0]).i64(p.dilation[1]);
  b.enqueue_1d(std::move(args), d.n * d.c * d.p * d.q);
}

void opencl_avg_pool2d(LaunchBuilder& b, const Node& node) {
  const auto& p = std::get<Pool2dParams>(node.params);
  const PoolDims d = pool_dims(b.desc(node.inputs[0]).shape, p);
  auto args = window_args(b, node, "avg_pool2d", d);
  args.i64(p.pad[2]).i64(p.pad[3]).i64(p.dilation[0]).i64(p.dilation[1]).i32(p.count_include_pad ? 1 : 0);
  b.enqueue_1d(std::move(args), d.n * d.c * d.p * d.q);
}

void opencl_global_avg_pool(LaunchBuilder& b, const Node& node) {
  const Shape& x = b.desc(node.inputs[0]).shape;
  const std::int64_t planes = x[0] * x[1];
  auto args = b.kernel("pool", "global_avg_pool", b.desc(node.output).dtype);
  args.tensor(node.inputs[0]).tensor(node.output).i64(planes).i64(x[2] * x[3]);
  b.enqueue_1d(std::move(args), planes);
}

}  // namespace porta::detail
