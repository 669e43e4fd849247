#pragma once
// Turns graph nodes into GPU kernel arguments: all the index and shape bookkeeping of the GPU
// backends, in plain C++ so that it is tested on the CPU against the reference semantics.
#include <string>
#include <vector>

#include "backends/gpu/plan/kernel_args.hpp"
#include "porta/graph.hpp"

namespace porta::detail::gpu {

IndexMap broadcast_map(const Shape& operand, const Shape& result);
IndexMap transpose_map(const Shape& x, const std::vector<std::int64_t>& perm);  // output index -> x offset

BinaryArgs binary_args(const Graph& graph, const Node& node);
UnaryArgs unary_args(const Graph& graph, const Node& node);  // elementwise activations and Cast
BatchNormArgs batchnorm_args(const Graph& graph, const Node& node);
PoolArgs pool_args(const Graph& graph, const Node& node);
RowArgs global_avg_pool_args(const Graph& graph, const Node& node);
RowArgs softmax_args(const Graph& graph, const Node& node);
ReduceArgs reduce_args(const Graph& graph, const Node& node);
NormArgs norm_args(const Graph& graph, const Node& node);
GatherArgs gather_args(const Graph& graph, const Node& node);  // Transpose, Slice and Expand
PadArgs pad_args(const Graph& graph, const Node& node);
GemmArgs gemm_args(const Graph& graph, const Node& node);  // MatMul and Gemm
ConvArgs conv_args(const Graph& graph, const Node& node);
ActivationBackwardArgs activation_backward_args(const Graph& graph, const Node& node);
MaxPoolBackwardArgs max_pool_backward_args(const Graph& graph, const Node& node);
SoftmaxCrossEntropyArgs softmax_cross_entropy_args(const Graph& graph, const Node& node);
DepthwiseGradientArgs depthwise_gradient_args(const Graph& graph, const Node& node);
SoftmaxCrossEntropyBackwardArgs softmax_cross_entropy_backward_args(const Graph& graph, const Node& node);
AttentionArgs attention_args(const Graph& graph, const Node& node);
IndexGatherArgs index_gather_args(const Graph& graph, const Node& node);  // Gather
CompareArgs compare_args(const Graph& graph, const Node& node);  // plan/logic_args.cpp, as the next two
LogicalArgs logical_args(const Graph& graph, const Node& node);
WhereArgs where_args(const Graph& graph, const Node& node);
DropoutArgs dropout_args(const Graph& graph, const Node& node);
// Why ops/attention.cu cannot run `node` (a head wider than its tiles), or empty.
std::string attention_unsupported_reason(const Graph& graph, const Node& node);
// Everything about a convolution that a library's algorithm choice depends on (dtype, shapes,
// stride, padding, dilation, groups, allow_tf32), and nothing else: equal keys, equal choices.
std::string conv_key(const ConvArgs& args);

// The epilogue left after a library computed alpha * op(A) op(B): beta * C and the activation.
EpilogueArgs gemm_epilogue_args(const GemmArgs& gemm);
// The epilogue left after a library computed the bare convolution: the bias and the activation.
EpilogueArgs conv_epilogue_args(const ConvArgs& conv, bool has_bias);

// Concat is one strided 2-D copy per input: `rows` rows of `row_bytes`, from a dense source into
// a destination whose rows are `dst_pitch` bytes apart, starting `dst_offset` bytes in.
struct CopyRect {
  std::size_t dst_offset = 0, row_bytes = 0, rows = 0, dst_pitch = 0;
};
std::vector<CopyRect> concat_copies(const Graph& graph, const Node& node);

}  // namespace porta::detail::gpu
