#include "core/runtime/op_math.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <variant>

#include "porta/error.hpp"

namespace porta::detail {

ActivationGradient activation_gradient(const ActivationBackwardParams& p) {
  ActivationGradient g{.kind = GRAD_RELU, .a = 0.0f, .b = 0.0f, .gelu_tanh = p.gelu.tanh_approximation};
  switch (p.activation) {
    case OpKind::Clip: g.kind = GRAD_CLIP, g.a = p.clip.min, g.b = p.clip.max; break;
    case OpKind::Gelu: g.kind = GRAD_GELU; break;
    case OpKind::HardSigmoid: g.kind = GRAD_HARD_SIGMOID, g.a = p.hard_sigmoid.alpha, g.b = p.hard_sigmoid.beta; break;
    case OpKind::HardSwish: g.kind = GRAD_HARD_SWISH; break;
    default: break;  // Relu, the only other the builder admits
  }
  return g;
}

BroadcastIndex::BroadcastIndex(const Shape& operand, const Shape& result)
    : result_(result), operand_strides_(result.size(), 0), identity_(operand == result) {
  // Align trailing dimensions; a size-1 operand dimension is repeated (stride 0).
  const auto lead = result.size() - operand.size();
  std::int64_t stride = 1;
  for (auto i = operand.size(); i-- > 0;) {
    operand_strides_[lead + i] = operand[i] == 1 ? 0 : stride;
    stride *= operand[i];
  }
}

std::int64_t BroadcastIndex::operator()(std::int64_t result_index) const {
  if (identity_) return result_index;
  std::int64_t offset = 0;
  for (auto i = result_.size(); i-- > 0;) {
    offset += (result_index % result_[i]) * operand_strides_[i];
    result_index /= result_[i];
  }
  return offset;
}

bool broadcast_shapes(const Shape& a, const Shape& b, Shape& result) {
  const auto rank = std::max(a.size(), b.size());
  result.assign(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    result[i] = da == 1 ? db : da;
  }
  return true;
}

MatMulDims matmul_dims(const Shape& a_in, const Shape& b_in, const MatMulParams& p) {
  // numpy: a vector operand becomes a matrix ([1, K] or [K, 1]) for the product.
  const Shape a = a_in.size() == 1 ? Shape{1, a_in[0]} : a_in;
  const Shape b = b_in.size() == 1 ? Shape{b_in[0], 1} : b_in;
  MatMulDims d;
  const auto ra = a.size(), rb = b.size();
  d.m = p.trans_a ? a[ra - 1] : a[ra - 2];
  d.k = p.trans_a ? a[ra - 2] : a[ra - 1];
  d.n = p.trans_b ? b[rb - 2] : b[rb - 1];
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  broadcast_shapes(a_batch, b_batch, d.batch);
  for (auto e : d.batch) d.batch_count *= e;
  const BroadcastIndex a_index(a_batch, d.batch), b_index(b_batch, d.batch);
  for (std::int64_t i = 0; i < d.batch_count; ++i) {
    d.a_offset.push_back(a_index(i) * d.m * d.k);
    d.b_offset.push_back(b_index(i) * d.k * d.n);
    d.c_offset.push_back(i * d.m * d.n);
  }
  return d;
}

std::string describe(const MatMulDims& d) {
  std::string line = "gemm " + std::to_string(d.m) + "x" + std::to_string(d.n) + "x" + std::to_string(d.k);
  return d.batch_count > 1 ? line + " batch " + std::to_string(d.batch_count) : line;
}

ConvSlots conv_slots(const Node& node) {
  const bool residual = std::get<Conv2dParams>(node.params).residual;
  const int optional = static_cast<int>(node.inputs.size()) - 2;
  return {.bias = optional - (residual ? 1 : 0) > 0 ? 2 : -1, .residual = residual ? optional + 1 : -1};
}

Shape activation_shape(Layout layout, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  return layout == Layout::NHWC ? Shape{n, h, w, c} : Shape{n, c, h, w};
}

namespace {
// (n, c, h, w) of an activation shape in `layout`.
std::array<std::int64_t, 4> nchw_extents(const Shape& x, Layout layout) {
  if (layout == Layout::NHWC) return {x[0], x[3], x[1], x[2]};
  return {x[0], x[1], x[2], x[3]};
}
}  // namespace

ConvDims conv_dims(const Shape& x, const Shape& w, const Conv2dParams& p) {
  ConvDims d{};
  const auto e = nchw_extents(x, p.layout);
  d.n = e[0], d.c = e[1], d.h = e[2], d.w = e[3];
  d.layout = p.layout;
  d.k = w[0], d.r = w[2], d.s = w[3];
  d.groups = p.groups;
  d.c_per_group = d.c / d.groups;
  d.k_per_group = d.k / d.groups;
  d.p = window_output_size(d.h, d.r, p.stride[0], p.pad[0], p.pad[2], p.dilation[0]);
  d.q = window_output_size(d.w, d.s, p.stride[1], p.pad[1], p.pad[3], p.dilation[1]);
  return d;
}

ConvDims depthwise_gradient_dims(const Shape& x, const Shape& dy, const Conv2dParams& p) {
  ConvDims d = conv_dims(x, {1, 1, 1, 1}, p);
  const auto e = nchw_extents(dy, p.layout);
  d.k = d.groups = d.c, d.c_per_group = d.k_per_group = 1;
  d.p = e[2], d.q = e[3];
  const auto taps = [](std::int64_t in, std::int64_t out, std::int64_t stride, std::int64_t pads,
                       std::int64_t dilation) {
    const std::int64_t room = in + pads - 1 - (out - 1) * stride;
    return room < 0 ? 0 : room / dilation + 1;
  };
  d.r = taps(d.h, d.p, p.stride[0], p.pad[0] + p.pad[2], p.dilation[0]);
  d.s = taps(d.w, d.q, p.stride[1], p.pad[1] + p.pad[3], p.dilation[1]);
  return d;
}

std::string describe(const ConvDims& d, const Conv2dParams& p) {
  std::string line = "conv";
  const auto add = [&line](std::string_view before, std::int64_t v) { (line += before) += std::to_string(v); };
  add(" ", d.n), add("x", d.c), add("x", d.h), add("x", d.w), add(" k", d.k), add(" ", d.r), add("x", d.s);
  add(" s", p.stride[0]);
  if (p.stride[1] != p.stride[0]) add(",", p.stride[1]);
  add(" g", d.groups);
  return line;
}

PoolDims pool_dims(const Shape& x, const Pool2dParams& p) {
  PoolDims d{};
  const auto e = nchw_extents(x, p.layout);
  d.n = e[0], d.c = e[1], d.h = e[2], d.w = e[3];
  d.layout = p.layout;
  d.p = window_output_size(d.h, p.kernel[0], p.stride[0], p.pad[0], p.pad[2], p.dilation[0],
                           p.ceil_mode);
  d.q = window_output_size(d.w, p.kernel[1], p.stride[1], p.pad[1], p.pad[3], p.dilation[1],
                           p.ceil_mode);
  return d;
}

PoolDims global_pool_dims(const Shape& x, const GlobalPoolParams& p) {
  PoolDims d{};
  const auto e = nchw_extents(x, p.layout);
  d.n = e[0], d.c = e[1], d.h = e[2], d.w = e[3];
  d.p = d.q = 1;
  d.layout = p.layout;
  return d;
}

Layout node_layout(const Node& node) {
  if (const auto* conv = std::get_if<Conv2dParams>(&node.params)) return conv->layout;
  if (const auto* pool = std::get_if<Pool2dParams>(&node.params)) return pool->layout;
  if (const auto* global = std::get_if<GlobalPoolParams>(&node.params)) return global->layout;
  return Layout::NCHW;
}

std::string nchw_only_reason(const Node& node, std::string_view backend) {
  if (node_layout(node) == Layout::NCHW) return {};
  return "the " + std::string(backend) + " backend's " + std::string(to_string(node.op)) +
         " kernels read NCHW only, not " + std::string(to_string(node_layout(node)));
}

std::string float_only_reason(const Graph& graph, const Node& node, std::string_view backend) {
  const std::string prefix = "the " + std::string(backend) + " backend has no kernels for ";
  switch (node.op) {
    // Element movers (as bits, whatever the dtype; gather's indices i64 or i32), cast, and the
    // comparisons, logical ops and where (bool results or conditions, operands of any dtype).
    case OpKind::Gather: case OpKind::Reshape: case OpKind::Transpose: case OpKind::Slice: case OpKind::Concat:
    case OpKind::Pad: case OpKind::Expand: case OpKind::Cast: case OpKind::Compare: case OpKind::Logical:
    case OpKind::Where: return {};
    default: break;
  }
  const bool class_labels = reads_class_labels(graph, node);  // i64/i32 labels, float logits
  for (std::size_t i = 0; i < node.inputs.size(); ++i)
    if (const Tensor t = node.inputs[i]; !is_float(graph.dtype(t)) && !(class_labels && i == 1))
      return prefix + std::string(to_string(graph.dtype(t))) + " tensors yet";
  if (!is_float(graph.dtype(node.output)))
    return prefix + std::string(to_string(graph.dtype(node.output))) + " tensors yet";
  return {};
}

std::int64_t gather_coordinate(std::int64_t index, std::int64_t extent, const Node& node) {
  if (index < -extent || index >= extent)
    throw Error(ErrorCode::InvalidArgument,
                "gather '" + node.name + "': index " + std::to_string(index) + " is out of range [" +
                    std::to_string(-extent) + ", " + std::to_string(extent) + ") along axis " +
                    std::to_string(std::get<GatherParams>(node.params).axis));
  return index < 0 ? index + extent : index;
}

std::int64_t label_coordinate(std::int64_t label, std::int64_t classes, const Node& node) {
  if (label < 0 || label >= classes)
    throw Error(ErrorCode::InvalidArgument, std::string(to_string(node.op)) + " '" + node.name + "': label " +
                                                std::to_string(label) + " is out of range [0, " +
                                                std::to_string(classes) + ") for " + std::to_string(classes) +
                                                " classes (a negative label is an error, not counted from the end)");
  return label;
}

bool reads_class_labels(const Graph& graph, const Node& node) {
  return (node.op == OpKind::SoftmaxCrossEntropy || node.op == OpKind::SoftmaxCrossEntropyBackward) &&
         !is_float(graph.dtype(node.inputs[1]));
}

AxisSplit split_at_axis(const Shape& shape, std::int64_t axis) {
  AxisSplit s;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(shape.size()); ++i) {
    if (i < axis) s.outer *= shape[i];
    else if (i == axis) s.axis = shape[i];
    else s.inner *= shape[i];
  }
  return s;
}

AxisSplit norm_rows(const Shape& shape, std::int64_t axis) {
  AxisSplit s;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(shape.size()); ++i) (i < axis ? s.outer : s.axis) *= shape[i];
  return s;
}

ReduceSplit reduce_split(const Shape& x, const std::vector<std::int64_t>& axes) {
  ReduceSplit s;
  std::int64_t stride = 1;
  int previous = -1;  // the group of the dimension after this one: 0 kept, 1 reduced
  std::vector<std::pair<std::int64_t, std::int64_t>> groups[2];  // (extent, stride), innermost first
  for (auto d = static_cast<std::int64_t>(x.size()); d-- > 0;) {
    const int group = std::binary_search(axes.begin(), axes.end(), d) ? 1 : 0;
    auto& dims = groups[group];
    if (group == previous) dims.back().first *= x[static_cast<std::size_t>(d)];  // contiguous with it
    else dims.emplace_back(x[static_cast<std::size_t>(d)], stride);
    stride *= x[static_cast<std::size_t>(d)];
    previous = group;
  }
  for (auto it = groups[0].rbegin(); it != groups[0].rend(); ++it) {
    s.kept_extent.push_back(it->first), s.kept_stride.push_back(it->second);
    s.kept_count *= it->first;
  }
  for (auto it = groups[1].rbegin(); it != groups[1].rend(); ++it) {
    s.reduced_extent.push_back(it->first), s.reduced_stride.push_back(it->second);
    s.reduced_count *= it->first;
  }
  return s;
}

std::vector<SliceDim> slice_dims(const Shape& x, const SliceParams& p) {
  std::vector<SliceDim> dims(x.size());
  for (std::size_t d = 0; d < x.size(); ++d) dims[d] = {0, 1, x[d]};
  for (std::size_t i = 0; i < p.starts.size(); ++i) {
    const auto axis = static_cast<std::size_t>(p.axes.empty() ? static_cast<std::int64_t>(i) : p.axes[i]);
    const std::int64_t dim = x[axis], step = p.steps.empty() ? 1 : p.steps[i];
    std::int64_t start = p.starts[i], end = p.ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    // Forwards, [0, dim] bounds both; backwards, start stays on an element and end may be just before 0.
    start = step > 0 ? std::clamp<std::int64_t>(start, 0, dim) : std::clamp<std::int64_t>(start, 0, dim - 1);
    end = step > 0 ? std::clamp<std::int64_t>(end, 0, dim) : std::clamp<std::int64_t>(end, -1, dim - 1);
    // Elements from start towards end, exclusive; written so that no step overflows (the builder
    // refuses INT64_MIN).
    const std::int64_t span = step > 0 ? end - start : start - end, stride = step > 0 ? step : -step;
    dims[axis] = {start, step, span <= 0 ? 0 : (span - 1) / stride + 1};
  }
  return dims;
}

StridedView strided_view(const Node& node, const Shape& x) {
  const Shape x_strides = contiguous_strides(x);
  StridedView view;
  if (const auto* t = std::get_if<TransposeParams>(&node.params)) {
    for (const std::int64_t axis : t->perm) {
      view.extent.push_back(x[static_cast<std::size_t>(axis)]);
      view.stride.push_back(x_strides[static_cast<std::size_t>(axis)]);
    }
  } else if (const auto* s = std::get_if<SliceParams>(&node.params)) {
    for (std::size_t d = 0; const SliceDim& dim : slice_dims(x, *s)) {
      view.extent.push_back(dim.length);
      view.stride.push_back(dim.step * x_strides[d]);
      view.offset += dim.start * x_strides[d++];
    }
  } else if (const auto* e = std::get_if<ExpandParams>(&node.params)) {
    const std::size_t lead = e->shape.size() - x.size();
    view.extent = e->shape;
    view.stride.assign(e->shape.size(), 0);
    for (std::size_t d = 0; d < x.size(); ++d) view.stride[lead + d] = x[d] == 1 ? 0 : x_strides[d];
  } else {
    throw Error(ErrorCode::Internal, "strided_view: " + node.name + " is no transpose, slice or expand");
  }
  return view;
}

AttentionDims attention_dims(const AttentionParams& p, const Shape& q, const Shape& v, const Shape* mask) {
  AttentionDims d{.batch = q[0], .heads = q[1], .queries = q[2], .keys = v[2], .depth = q[3], .width = v[3],
                  .scale = p.scale, .causal = p.causal, .mask = mask != nullptr};
  if (!mask) return d;
  const std::int64_t extent[4] = {d.batch, d.heads, d.queries, d.keys};
  const auto rank = static_cast<std::int64_t>(mask->size());
  std::int64_t stride = 1;
  for (std::int64_t dim = 3; dim >= 0; --dim) {  // the mask's dims align with the scores' last ones
    const std::int64_t m = dim - (4 - rank);
    const std::int64_t size = m >= 0 ? (*mask)[static_cast<std::size_t>(m)] : 1;
    d.mask_stride[dim] = size == extent[dim] && size != 1 ? stride : 0;
    stride *= size;
  }
  return d;
}

}  // namespace porta::detail
