#include <variant>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void opencl_conv2d(LaunchBuilder& b, const Node& node) {
  const auto& p = std::get<Conv2dParams>(node.params);
  const ConvDims d = conv_dims(b.desc(node.inputs[0]).shape, b.desc(node.inputs[1]).shape, p);
  const ConvSlots slots = conv_slots(node);
  // Absent operands bind the output, which the kernel then never reads.
  const Tensor bias = slots.bias >= 0 ? node.inputs[slots.bias] : node.output;
  const Tensor residual = slots.residual >= 0 ? node.inputs[slots.residual] : node.output;
  const GemmTiles& t = b.gemm_tiles();
  // Implicit GEMM needs enough filters per group to fill its blocks' rows; depthwise and other
  // thin groups take the direct kernel, a work-item per piece of an output row.
  const std::string problem = describe(d, p);
  if (t.vector_kernel && d.k_per_group >= 8) {
    b.note_plan(problem, "conv implicit_gemm " + t.to_string());
    auto args = b.kernel("conv2d", "conv2d_gemm", b.desc(node.output).dtype);
    args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(bias).tensor(residual).tensor(node.output)
        .i32(slots.bias >= 0).i32(slots.residual >= 0).i64(d.c).i64(d.h).i64(d.w).i64(d.k).i64(d.r).i64(d.s).i64(d.p)
        .i64(d.q).i64(p.stride[0]).i64(p.stride[1]).i64(p.pad[0]).i64(p.pad[1]).i64(p.dilation[0]).i64(p.dilation[1])
        .i64(d.groups).i64(d.c_per_group).i64(d.k_per_group).i32(activation_code(p.activation));
    const auto blocks = [](std::int64_t extent, int block) { return static_cast<std::size_t>(ceil_div(extent, block)); };
    b.enqueue(std::move(args), 3,
              {blocks(d.p * d.q, t.block_n), blocks(d.k_per_group, t.block_m), static_cast<std::size_t>(d.n * d.groups)},
              {1, 1, 1});
    return;
  }
  auto args = b.kernel("conv2d", "conv2d", b.desc(node.output).dtype);
  args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(bias).tensor(residual).tensor(node.output)
      .i32(slots.bias >= 0).i32(slots.residual >= 0).i64(d.n).i64(d.c).i64(d.h).i64(d.w).i64(d.k).i64(d.r).i64(d.s)
      .i64(d.p).i64(d.q).i64(p.stride[0]).i64(p.stride[1]).i64(p.pad[0]).i64(p.pad[1]).i64(p.dilation[0])
      .i64(p.dilation[1]).i64(d.c_per_group).i64(d.k_per_group).i32(activation_code(p.activation));
  b.note_plan(problem, "conv direct");
  constexpr std::int64_t row_chunk = 16;  // ROW_CHUNK of kernels/conv2d.cl: outputs per work-item
  b.enqueue_1d(std::move(args), d.n * d.k * d.p * ceil_div(d.q, row_chunk));
}

}  // namespace porta::detail
