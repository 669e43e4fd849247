// Conv2d through CLBlast's Convgemm (im2col, then a batched GEMM) on porta's NCHW buffers, in
// place: x is [N, C, H, W], w is [K, C, R, S], y is [N, K, P, Q], as Convgemm lays them out, with
// cross-correlation as porta's convolution is. The bias, residual and activation go to porta's
// epilogue kernel after it.
#include <climits>
#include <variant>

#include "backends/opencl/vendor/clblast.hpp"
#include "core/runtime/op_math.hpp"
#include "porta/error.hpp"

namespace porta::detail {

std::string clblast_conv2d_unsupported_reason(const Graph& graph, const Node& node) {
  const auto& p = std::get<Conv2dParams>(node.params);
  const ConvDims d = conv_dims(graph.desc(node.inputs[0]).shape, graph.desc(node.inputs[1]).shape, p);
  if (d.groups != 1) return "CLBlast's Convgemm has no groups (groups=" + std::to_string(d.groups) + ")";
  if (p.pad[0] != p.pad[2] || p.pad[1] != p.pad[3])
    return "CLBlast's Convgemm pads both sides of a dimension alike (pad top/left/bottom/right " +
           std::to_string(p.pad[0]) + "/" + std::to_string(p.pad[1]) + "/" + std::to_string(p.pad[2]) + "/" +
           std::to_string(p.pad[3]) + ")";
  // Convgemm passes sizes and offsets to its kernel as 32-bit ints.
  for (const Tensor t : {node.inputs[0], node.inputs[1], node.output})
    if (graph.desc(t).numel() > INT_MAX) return "CLBlast's Convgemm indexes tensors with 32-bit ints";
  return {};
}

void clblast_conv2d(LaunchBuilder& b, const Node& node) {
  const auto& p = std::get<Conv2dParams>(node.params);
  const ConvDims d = conv_dims(b.desc(node.inputs[0]).shape, b.desc(node.inputs[1]).shape, p);
  const Tensor x = node.inputs[0], w = node.inputs[1], y = node.output;
  b.note_plan(describe(d, p), "clblast Convgemm");
  b.library({[=](cl_command_queue queue, const LocateTensor& locate, cl_event* event) {
    const ClTensorRef rx = locate(x), rw = locate(w), ry = locate(y);
    for (const ClTensorRef& t : {rx, rw, ry})
      if (clblast_glue::element_offset(t) > INT_MAX)
        throw Error(ErrorCode::Unsupported, "CLBlast's Convgemm takes 32-bit offsets; this tensor lies beyond them in the "
                                            "device arena");
    const auto size = [](std::int64_t v) { return static_cast<std::size_t>(v); };
    clblast_glue::check(
        clblast::Convgemm<float>(clblast::KernelMode::kCrossCorrelation, size(d.c), size(d.h), size(d.w), size(d.r),
                                 size(d.s), size(p.pad[0]), size(p.pad[1]), size(p.stride[0]), size(p.stride[1]),
                                 size(p.dilation[0]), size(p.dilation[1]), size(d.k), size(d.n), rx.mem,
                                 clblast_glue::element_offset(rx), rw.mem, clblast_glue::element_offset(rw), ry.mem,
                                 clblast_glue::element_offset(ry), &queue, event),
        "Convgemm");
  }});
  const ConvSlots slots = conv_slots(node);
  if (slots.bias < 0 && slots.residual < 0 && p.activation == Activation::None) return;
  const std::int64_t total = d.n * d.k * d.p * d.q;
  auto args = b.kernel("epilogue", "conv_epilogue", DType::f32);
  args.tensor(y).tensor(slots.bias >= 0 ? node.inputs[slots.bias] : y)
      .tensor(slots.residual >= 0 ? node.inputs[slots.residual] : y).i64(total).i64(d.k).i64(d.p * d.q)
      .i32(slots.bias >= 0).i32(slots.residual >= 0).i32(activation_code(p.activation));
  b.enqueue_1d(std::move(args), total);
}

}  // namespace porta::detail
