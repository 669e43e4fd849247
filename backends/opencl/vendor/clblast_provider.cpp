#include <string>

#include "backends/opencl/cl_error.hpp"
#include "backends/opencl/vendor/clblast.hpp"
#include "backends/opencl/vendor/provider.hpp"

namespace porta::detail {
namespace clblast_glue {

void check(clblast::StatusCode status, std::string_view routine) {
  if (status == clblast::StatusCode::kSuccess) return;
  const int code = static_cast<int>(status);
  const std::string call = "CLBlast " + std::string(routine);
  // CLBlast passes OpenCL's own statuses through; the rest are its own (clblast.h).
  if (code > -1000) throw_cl_error(call, code);
  throw Error(ErrorCode::Internal, call + " failed with CLBlast status " + std::to_string(code) + " (see clblast.h)");
}

std::size_t element_offset(const ClTensorRef& tensor) { return tensor.offset / sizeof(float); }

}  // namespace clblast_glue

std::string clblast_unsupported_reason(const Graph& graph, const Node& node) {
  if (node.op != OpKind::MatMul && node.op != OpKind::Gemm && node.op != OpKind::Conv2d) return {};  // porta's kernel
  if (graph.dtype(node.output) != DType::f32)
    return "porta runs CLBlast in f32 only (its f16 needs cl_khr_fp16, and it has no bf16)";
  for (const Tensor t : node.inputs)
    if (graph.desc(t).numel() == 0) return "CLBlast rejects empty matrices";
  if (graph.desc(node.output).numel() == 0) return "CLBlast rejects empty matrices";
  return node.op == OpKind::Conv2d ? clblast_conv2d_unsupported_reason(graph, node) : std::string{};
}

OpenClOp clblast_op(OpKind op) {
  static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
  switch (op) {
    case OpKind::MatMul: return clblast_matmul;
    case OpKind::Gemm: return clblast_gemm;
    case OpKind::Conv2d: return clblast_conv2d;
    default: return opencl_op(op);
  }
}

const ClVendorProvider& clblast_provider() {
  static const ClVendorProvider provider{.unsupported_reason = clblast_unsupported_reason, .op = clblast_op};
  return provider;
}

}  // namespace porta::detail
