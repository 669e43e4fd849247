#include "backends/gpu/plan/op_args.hpp"

#include <string>
#include <variant>

#include "core/runtime/dropout.hpp"
#include "core/runtime/op_math.hpp"
#include "porta/error.hpp"

namespace porta::detail::gpu {
namespace {

const Shape& shape_of(const Graph& graph, Tensor t) { return graph.shape(t); }
DType dtype_of(const Graph& graph, Tensor t) { return graph.dtype(t); }

// A matrix operand of matmul/gemm with numpy's vector promotion: [K] is [1, K] as A, [K, 1] as B.
Shape as_matrix(const Shape& s, bool is_a) {
  if (s.size() != 1) return s;
  return is_a ? Shape{1, s[0]} : Shape{s[0], 1};
}

}  // namespace

IndexMap broadcast_map(const Shape& operand, const Shape& result) {
  IndexMap map;
  map.rank = static_cast<int>(result.size());
  map.identity = operand == result;
  const auto lead = result.size() - operand.size();
  std::int64_t stride = 1;
  for (auto i = result.size(); i-- > 0;) {
    map.extent[i] = result[i];
    if (i < lead) continue;
    const std::int64_t dim = operand[i - lead];
    map.stride[i] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return map;
}

IndexMap transpose_map(const Shape& x, const std::vector<std::int64_t>& perm) {
  const Shape x_strides = contiguous_strides(x);
  IndexMap map;
  map.rank = static_cast<int>(perm.size());
  map.identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i) {
    const auto from = static_cast<std::size_t>(perm[i]);
    map.extent[i] = x[from];
    map.stride[i] = x_strides[from];
    map.identity = map.identity && (perm[i] == static_cast<std::int64_t>(i) || x[from] == 1);
  }
  return map;
}

BinaryArgs binary_args(const Graph& graph, const Node& node) {
  BinaryArgs args;
  static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
  switch (node.op) {
    case OpKind::Add: args.op = BinaryOp::Add; break;
    case OpKind::Sub: args.op = BinaryOp::Sub; break;
    case OpKind::Mul: args.op = BinaryOp::Mul; break;
    case OpKind::Div: args.op = BinaryOp::Div; break;
    case OpKind::Pow: args.op = BinaryOp::Pow; break;
    default: throw Error(ErrorCode::Internal, "binary_args: " + std::string(to_string(node.op)) + " is not binary");
  }
  const Shape& y = shape_of(graph, node.output);
  args.dtype = dtype_of(graph, node.output);
  args.count = graph.desc(node.output).numel();
  args.a = broadcast_map(shape_of(graph, node.inputs[0]), y);
  args.b = broadcast_map(shape_of(graph, node.inputs[1]), y);
  return args;
}

UnaryArgs unary_args(const Graph& graph, const Node& node) {
  UnaryArgs args;
  args.x_dtype = dtype_of(graph, node.inputs[0]);
  args.y_dtype = dtype_of(graph, node.output);
  args.count = graph.desc(node.output).numel();
  static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
  switch (node.op) {
    case OpKind::Relu: args.op = UnaryOp::Relu; break;
    case OpKind::Clip: {
      const auto& p = std::get<ClipParams>(node.params);
      args.op = UnaryOp::Clip;
      args.lo = p.min;
      args.hi = p.max;
      break;
    }
    case OpKind::Sigmoid: args.op = UnaryOp::Sigmoid; break;
    case OpKind::Silu: args.op = UnaryOp::Silu; break;
    case OpKind::Tanh: args.op = UnaryOp::Tanh; break;
    case OpKind::Gelu:
      args.op = std::get<GeluParams>(node.params).tanh_approximation ? UnaryOp::GeluTanh : UnaryOp::Gelu;
      break;
    case OpKind::Cast: args.op = UnaryOp::Identity; break;
    case OpKind::Erf: args.op = UnaryOp::Erf; break;
    case OpKind::Sqrt: args.op = UnaryOp::Sqrt; break;
    case OpKind::Reciprocal: args.op = UnaryOp::Reciprocal; break;
    case OpKind::HardSigmoid: {
      const auto& p = std::get<HardSigmoidParams>(node.params);
      args.op = UnaryOp::HardSigmoid;
      args.lo = p.alpha;
      args.hi = p.beta;
      break;
    }
    case OpKind::HardSwish: args.op = UnaryOp::HardSwish; break;
    default: throw Error(ErrorCode::Internal, "unary_args: " + std::string(to_string(node.op)) + " is not unary");
  }
  return args;
}

BatchNormArgs batchnorm_args(const Graph& graph, const Node& node) {
  const AxisSplit split = split_at_axis(shape_of(graph, node.inputs[0]), 1);
  BatchNormArgs args;
  args.dtype = dtype_of(graph, node.output);
  args.count = graph.desc(node.output).numel();
  args.channels = split.axis;
  args.inner = split.inner;
  args.epsilon = std::get<BatchNormParams>(node.params).epsilon;
  return args;
}

PoolArgs pool_args(const Graph& graph, const Node& node) {
  const auto& p = std::get<Pool2dParams>(node.params);
  const PoolDims d = pool_dims(shape_of(graph, node.inputs[0]), p);
  PoolArgs args;
  args.dtype = dtype_of(graph, node.output);
  args.max = node.op == OpKind::MaxPool2d;
  args.count_include_pad = p.count_include_pad;
  args.planes = d.n * d.c;
  args.h = d.h, args.w = d.w, args.p = d.p, args.q = d.q;
  for (int i = 0; i < 2; ++i) {
    args.kernel[i] = p.kernel[i];
    args.stride[i] = p.stride[i];
    args.dilation[i] = p.dilation[i];
  }
  for (int i = 0; i < 4; ++i) args.pad[i] = p.pad[i];
  return args;
}

RowArgs global_avg_pool_args(const Graph& graph, const Node& node) {
  const Shape& x = shape_of(graph, node.inputs[0]);
  return {.dtype = dtype_of(graph, node.output), .outer = x[0] * x[1], .axis = x[2] * x[3], .inner = 1};
}

RowArgs softmax_args(const Graph& graph, const Node& node) {
  const AxisSplit split = split_at_axis(shape_of(graph, node.inputs[0]), std::get<SoftmaxParams>(node.params).axis);
  return {.dtype = dtype_of(graph, node.output), .outer = split.outer, .axis = split.axis, .inner = split.inner};
}

ReduceArgs reduce_args(const Graph& graph, const Node& node) {
  const auto& p = std::get<ReduceParams>(node.params);
  const ReduceSplit s = reduce_split(shape_of(graph, node.inputs[0]), p.axes);
  const auto map = [](const Shape& extent, const Shape& stride) {
    IndexMap m;
    m.rank = static_cast<int>(extent.size());
    m.identity = false;
    for (std::size_t d = 0; d < extent.size(); ++d) m.extent[d] = extent[d], m.stride[d] = stride[d];
    return m;
  };
  return {.dtype = dtype_of(graph, node.output), .op = p.op, .outputs = s.kept_count, .count = s.reduced_count,
          .kept = map(s.kept_extent, s.kept_stride), .reduced = map(s.reduced_extent, s.reduced_stride)};
}

NormArgs norm_args(const Graph& graph, const Node& node) {
  const auto& p = std::get<NormParams>(node.params);
  const AxisSplit rows = norm_rows(shape_of(graph, node.inputs[0]), p.axis);
  return {.dtype = dtype_of(graph, node.output), .rows = rows.outer, .n = rows.axis, .epsilon = p.epsilon,
          .rms = node.op == OpKind::RmsNorm};
}

GatherArgs gather_args(const Graph& graph, const Node& node) {
  const Shape& x = shape_of(graph, node.inputs[0]);
  GatherArgs args;
  args.element_bytes = static_cast<int>(size_of(dtype_of(graph, node.output)));
  args.count = graph.desc(node.output).numel();
  if (node.op == OpKind::Transpose) {
    args.x = transpose_map(x, std::get<TransposeParams>(node.params).perm);
    return args;
  }
  const StridedView view = strided_view(node, x);
  args.x.rank = static_cast<int>(view.extent.size());
  args.x.identity = false;
  for (std::size_t d = 0; d < view.extent.size(); ++d) {
    args.x.extent[d] = view.extent[d];
    args.x.stride[d] = view.stride[d];
  }
  args.x_offset = view.offset;
  return args;
}

PadArgs pad_args(const Graph& graph, const Node& node) {
  const auto& p = std::get<PadParams>(node.params);
  const Shape& x = shape_of(graph, node.inputs[0]);
  const Shape& y = shape_of(graph, node.output);
  PadArgs args;
  args.element_bytes = static_cast<int>(size_of(dtype_of(graph, node.output)));
  args.rank = static_cast<int>(y.size());
  args.count = graph.desc(node.output).numel();
  for (std::size_t d = 0; d < y.size(); ++d) {
    args.y_extent[d] = y[d];
    args.x_extent[d] = x[d];
    args.begin[d] = p.pads[d];
  }
  args.mode = p.mode;
  args.value = storage_bits(p.value, dtype_of(graph, node.output));
  return args;
}

GemmArgs gemm_args(const Graph& graph, const Node& node) {
  const bool is_gemm = node.op == OpKind::Gemm;
  MatMulParams trans;
  GemmArgs args;
  if (is_gemm) {
    const auto& p = std::get<GemmParams>(node.params);
    trans = {.trans_a = p.trans_a, .trans_b = p.trans_b};
    args.alpha = p.alpha;
    args.activation = p.activation;
    if (node.inputs.size() == 3) {
      args.has_c = true;
      args.beta = p.beta;
      const IndexMap c = broadcast_map(shape_of(graph, node.inputs[2]), shape_of(graph, node.output));
      args.c_row = c.stride[0];
      args.c_col = c.stride[1];
    }
  } else {
    trans = std::get<MatMulParams>(node.params);
  }
  const Shape a = as_matrix(shape_of(graph, node.inputs[0]), true);
  const Shape b = as_matrix(shape_of(graph, node.inputs[1]), false);
  const MatMulDims d = matmul_dims(a, b, trans);
  args.dtype = dtype_of(graph, node.output);
  args.m = d.m, args.n = d.n, args.k = d.k;
  // Stored A is [M, K], or [K, M] with trans_a; stored B is [K, N], or [N, K] with trans_b.
  args.a_row = trans.trans_a ? 1 : d.k;
  args.a_col = trans.trans_a ? d.m : 1;
  args.b_row = trans.trans_b ? 1 : d.n;
  args.b_col = trans.trans_b ? d.k : 1;

  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const IndexMap a_map = broadcast_map(a_batch, d.batch), b_map = broadcast_map(b_batch, d.batch);
  args.batch_rank = static_cast<int>(d.batch.size());
  args.batch_count = d.batch_count;
  for (int i = 0; i < args.batch_rank; ++i) {
    args.batch_extent[i] = d.batch[static_cast<std::size_t>(i)];
    args.a_batch_stride[i] = a_map.stride[i] * d.m * d.k;
    args.b_batch_stride[i] = b_map.stride[i] * d.k * d.n;
  }
  return args;
}

std::string conv_key(const ConvArgs& a) {
  std::string key(to_string(a.dtype));
  for (const std::int64_t v : {a.n, a.c, a.h, a.w, a.k, a.r, a.s, a.groups, a.stride_h, a.stride_w, a.pad_top, a.pad_left,
                               a.p, a.q, a.dilation_h, a.dilation_w})
    key += ',' + std::to_string(v);
  return key + (a.allow_tf32 ? ",tf32" : "");
}

ConvArgs conv_args(const Graph& graph, const Node& node) {
  const auto& p = std::get<Conv2dParams>(node.params);
  const ConvDims d = conv_dims(shape_of(graph, node.inputs[0]), shape_of(graph, node.inputs[1]), p);
  ConvArgs args;
  args.dtype = dtype_of(graph, node.output);
  args.n = d.n, args.c = d.c, args.h = d.h, args.w = d.w;
  args.k = d.k, args.r = d.r, args.s = d.s, args.p = d.p, args.q = d.q;
  args.groups = d.groups, args.c_per_group = d.c_per_group, args.k_per_group = d.k_per_group;
  args.stride_h = p.stride[0], args.stride_w = p.stride[1];
  args.pad_top = p.pad[0], args.pad_left = p.pad[1];
  args.dilation_h = p.dilation[0], args.dilation_w = p.dilation[1];
  args.activation = p.activation;
  args.div_rs = FastDivisor(d.r * d.s), args.div_s = FastDivisor(d.s);
  args.div_pq = FastDivisor(d.p * d.q), args.div_p = FastDivisor(d.p), args.div_q = FastDivisor(d.q);
  args.div_k = FastDivisor(d.k), args.div_k_per_group = FastDivisor(d.k_per_group);
  return args;
}

EpilogueArgs gemm_epilogue_args(const GemmArgs& gemm) {
  EpilogueArgs e;
  e.dtype = gemm.dtype;
  e.count = gemm.batch_count * gemm.m * gemm.n;
  e.activation = gemm.activation;
  if (gemm.has_c) {
    e.addend_scale = gemm.beta;
    e.addend_map = {.rank = 3, .extent = {gemm.batch_count, gemm.m, gemm.n}, .stride = {0, gemm.c_row, gemm.c_col},
                    .identity = false};
  }
  return e;
}

EpilogueArgs conv_epilogue_args(const ConvArgs& conv, bool has_bias) {
  EpilogueArgs e;
  e.dtype = conv.dtype;
  e.count = conv.n * conv.k * conv.p * conv.q;
  e.activation = conv.activation;
  if (has_bias)
    e.addend_map = {.rank = 3, .extent = {conv.n, conv.k, conv.p * conv.q}, .stride = {0, 1, 0}, .identity = false};
  return e;
}

std::vector<CopyRect> concat_copies(const Graph& graph, const Node& node) {
  const std::int64_t axis = std::get<ConcatParams>(node.params).axis;
  const std::size_t element = size_of(dtype_of(graph, node.output));
  const AxisSplit y = split_at_axis(shape_of(graph, node.output), axis);
  std::vector<CopyRect> copies;
  std::int64_t axis_offset = 0;
  for (const Tensor t : node.inputs) {
    const AxisSplit x = split_at_axis(shape_of(graph, t), axis);
    copies.push_back({.dst_offset = static_cast<std::size_t>(axis_offset * y.inner) * element,
                      .row_bytes = static_cast<std::size_t>(x.axis * x.inner) * element,
                      .rows = static_cast<std::size_t>(x.outer),
                      .dst_pitch = static_cast<std::size_t>(y.axis * y.inner) * element});
    axis_offset += x.axis;
  }
  return copies;
}

AttentionArgs attention_args(const Graph& graph, const Node& node) {
  const bool has_mask = node.inputs.size() > 3;
  const AttentionDims d = attention_dims(std::get<AttentionParams>(node.params), shape_of(graph, node.inputs[0]),
                                         shape_of(graph, node.inputs[2]),
                                         has_mask ? &shape_of(graph, node.inputs[3]) : nullptr);
  AttentionArgs args{.dtype = dtype_of(graph, node.output), .problems = d.problems(), .heads = d.heads,
                     .queries = d.queries, .keys = d.keys, .depth = d.depth, .width = d.width,
                     .scale = d.scale, .causal = d.causal};
  for (int i = 0; i < 4; ++i) args.mask_stride[i] = d.mask_stride[i];
  return args;
}

std::string attention_unsupported_reason(const Graph& graph, const Node& node) {
  const std::int64_t depth = shape_of(graph, node.inputs[0])[3], width = shape_of(graph, node.inputs[2])[3];
  if (depth <= attention_max_head_dim && width <= attention_max_head_dim) return {};
  return "the attention kernel holds head_dim up to " + std::to_string(attention_max_head_dim) + ", not q's " +
         std::to_string(depth) + " or v's " + std::to_string(width);
}

IndexGatherArgs index_gather_args(const Graph& graph, const Node& node) {
  const AxisSplit d = split_at_axis(shape_of(graph, node.inputs[0]), std::get<GatherParams>(node.params).axis);
  return {.element_bytes = static_cast<int>(size_of(dtype_of(graph, node.output))),
          .index64 = dtype_of(graph, node.inputs[1]) == DType::i64,
          .count = graph.desc(node.output).numel(), .index_count = graph.desc(node.inputs[1]).numel(),
          .axis = d.axis, .inner = d.inner};
}

DropoutArgs dropout_args(const Graph& graph, const Node& node) {
  const DropoutMask m = dropout_mask(std::get<DropoutParams>(node.params), shape_of(graph, node.output));
  return {.dtype = dtype_of(graph, node.output), .count = graph.desc(node.output).numel(), .seed = m.seed,
          .threshold = m.threshold, .scale = m.scale, .span = m.span, .offset = m.offset};
}

}  // namespace porta::detail::gpu
