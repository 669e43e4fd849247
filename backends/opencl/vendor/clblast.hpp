#pragma once
// CLBlast as the OpenCL device's vendor provider (impl=vendor): it runs f32 MatMul, Gemm and
// Conv2d, followed by porta's epilogue kernel (kernels/epilogue.cl) for what it cannot fuse;
// porta's own kernels run every other op. Shared helpers of the files in this folder.
#include <clblast.h>

#include <string>
#include <string_view>

#include "backends/opencl/ops/ops.hpp"

namespace porta::detail {

// Why CLBlast cannot run `node` (a dtype, a convolution it has no form for), or empty; also
// empty for the ops porta's kernels run.
std::string clblast_unsupported_reason(const Graph& graph, const Node& node);
// CLBlast's launcher for `op` where it has one, porta's otherwise.
OpenClOp clblast_op(OpKind op);

void clblast_matmul(LaunchBuilder& b, const Node& node);
void clblast_gemm(LaunchBuilder& b, const Node& node);
void clblast_conv2d(LaunchBuilder& b, const Node& node);
std::string clblast_conv2d_unsupported_reason(const Graph& graph, const Node& node);

namespace clblast_glue {

// Throws porta::Error naming the routine and CLBlast's status unless it is kSuccess.
void check(clblast::StatusCode status, std::string_view routine);
// A tensor's byte offset as CLBlast's element offset of f32 data.
std::size_t element_offset(const ClTensorRef& tensor);

}  // namespace clblast_glue
}  // namespace porta::detail
