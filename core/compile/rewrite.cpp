#include "core/compile/rewrite.hpp"

#include <variant>

#include "core/runtime/op_math.hpp"
#include "porta/error.hpp"

namespace porta::detail {

GraphRewriter::GraphRewriter(const Graph& source) : source_(source), map_(source.tensors().size()) {
  for (const Tensor t : source.inputs()) {
    const TensorInfo& info = source.info(t);
    replace(t, graph.input(info.name, info.desc.shape, info.desc.dtype, info.input_strides));
  }
  for (const Tensor t : source.variables()) {
    const TensorInfo& info = source.info(t);
    replace(t, graph.variable_bytes(info.name, info.desc.shape, info.desc.dtype, info.data));
  }
}

Tensor GraphRewriter::operator[](Tensor old) {
  Tensor& now = map_[static_cast<std::size_t>(old.id)];
  if (!now) {
    const TensorInfo& info = source_.info(old);
    if (info.role != Role::Constant)
      throw Error(ErrorCode::Internal, "graph rewrite: tensor '" + info.name + "' is used before it is rebuilt");
    now = graph.constant_bytes(info.name, info.desc.shape, info.desc.dtype, info.data);
  }
  return now;
}

std::vector<Tensor> GraphRewriter::inputs(const Node& node) {
  std::vector<Tensor> now;
  now.reserve(node.inputs.size());
  for (const Tensor t : node.inputs) now.push_back((*this)[t]);
  return now;
}

Tensor GraphRewriter::copy(const Node& node) {
  const Tensor out = add(node, node.params, inputs(node));
  replace(node.output, out);
  return out;
}

Tensor GraphRewriter::add(const Node& node, const OpParams& params, std::span<const Tensor> in) {
  Graph& g = graph;
  const std::string& name = node.name;
  const auto opt = [&](std::size_t i) { return i < in.size() ? in[i] : Tensor{}; };
  static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
  switch (node.op) {
    case OpKind::MatMul: return g.matmul(in[0], in[1], std::get<MatMulParams>(params), name);
    case OpKind::Gemm: return g.gemm(in[0], in[1], std::get<GemmParams>(params), opt(2), name);
    case OpKind::Conv2d: {
      const auto& p = std::get<Conv2dParams>(params);
      const Tensor residual = p.residual ? in.back() : Tensor{};
      const Tensor bias = in.size() > (p.residual ? 3u : 2u) ? in[2] : Tensor{};
      return g.conv2d(in[0], in[1], p, bias, name, residual);
    }
    case OpKind::Add: return g.add(in[0], in[1], name);
    case OpKind::Sub: return g.sub(in[0], in[1], name);
    case OpKind::Mul: return g.mul(in[0], in[1], name);
    case OpKind::Div: return g.div(in[0], in[1], name);
    case OpKind::Relu: return g.relu(in[0], name);
    case OpKind::Clip: {
      const auto& p = std::get<ClipParams>(params);
      return g.clip(in[0], p.min, p.max, name);
    }
    case OpKind::Sigmoid: return g.sigmoid(in[0], name);
    case OpKind::Silu: return g.silu(in[0], name);
    case OpKind::Tanh: return g.tanh(in[0], name);
    case OpKind::Gelu: return g.gelu(in[0], std::get<GeluParams>(params), name);
    case OpKind::BatchNorm:
      return g.batchnorm(in[0], in[1], in[2], in[3], in[4], std::get<BatchNormParams>(params), name);
    case OpKind::MaxPool2d: return g.max_pool2d(in[0], std::get<Pool2dParams>(params), name);
    case OpKind::AvgPool2d: return g.avg_pool2d(in[0], std::get<Pool2dParams>(params), name);
    case OpKind::GlobalAvgPool: return g.global_avg_pool(in[0], std::get<GlobalPoolParams>(params), name);
    case OpKind::Softmax: return g.softmax(in[0], std::get<SoftmaxParams>(params).axis, name);
    case OpKind::Reshape: return g.reshape(in[0], std::get<ReshapeParams>(params).shape, name);
    case OpKind::Transpose: return g.transpose(in[0], std::get<TransposeParams>(params).perm, name);
    case OpKind::Concat: return g.concat(in, std::get<ConcatParams>(params).axis, name);
    case OpKind::Cast: return g.cast(in[0], std::get<CastParams>(params).to, name);
    case OpKind::Erf: return g.erf(in[0], name);
    case OpKind::Sqrt: return g.sqrt(in[0], name);
    case OpKind::Reciprocal: return g.reciprocal(in[0], name);
    case OpKind::HardSigmoid: return g.hard_sigmoid(in[0], std::get<HardSigmoidParams>(params), name);
    case OpKind::HardSwish: return g.hard_swish(in[0], name);
    case OpKind::Pow: return g.pow(in[0], in[1], name);
    case OpKind::Reduce: return g.reduce(in[0], std::get<ReduceParams>(params), name);
    case OpKind::LayerNorm: return g.layer_norm(in[0], in[1], opt(2), std::get<NormParams>(params), name);
    case OpKind::RmsNorm: return g.rms_norm(in[0], in[1], std::get<NormParams>(params), name);
    case OpKind::Slice: return g.slice(in[0], std::get<SliceParams>(params), name);
    case OpKind::Pad: return g.pad(in[0], std::get<PadParams>(params), name);
    case OpKind::Expand: return g.expand(in[0], std::get<ExpandParams>(params).shape, name);
    case OpKind::Gather: return g.gather(in[0], in[1], std::get<GatherParams>(params).axis, name);
    case OpKind::Compare: return g.compare(in[0], in[1], std::get<CompareParams>(params).op, name);
    case OpKind::Logical: return g.logical(std::get<LogicalParams>(params).op, {in.begin(), in.end()}, name);
    case OpKind::Where: return g.where(in[0], in[1], in[2], name);
    case OpKind::ActivationBackward:
      return g.activation_backward(in[0], in[1], std::get<ActivationBackwardParams>(params), name);
    case OpKind::MaxPool2dBackward: return g.max_pool2d_backward(in[0], in[1], std::get<Pool2dParams>(params), name);
    case OpKind::SoftmaxCrossEntropy: return g.softmax_cross_entropy(in[0], in[1], name);
    case OpKind::SoftmaxCrossEntropyBackward: return g.softmax_cross_entropy_backward(in[0], in[1], in[2], name);
    case OpKind::Attention: return g.attention(in[0], in[1], in[2], std::get<AttentionParams>(params), opt(3), name);
    case OpKind::Dropout: return g.dropout(in[0], in[1], std::get<DropoutParams>(params), name);
    case OpKind::DepthwiseFilterGradient:
      return g.depthwise_filter_gradient(in[0], in[1], std::get<Conv2dParams>(params), name);
  }
  throw Error(ErrorCode::Internal, "graph rewrite: op " + std::string(to_string(node.op)) + " has no builder");
}

Graph GraphRewriter::finish() && {
  for (const auto& [name, t] : source_.outputs()) graph.output(name, (*this)[t]);
  for (const auto& [variable, value] : source_.assignments()) graph.assign((*this)[variable], (*this)[value]);
  return std::move(graph);
}

}  // namespace porta::detail
