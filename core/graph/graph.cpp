// The graph builder: every op checks its operands and infers its result here, so that errors
// name the node, the op and the offending values at the line that made the mistake.
#include "porta/graph.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/runtime/dropout.hpp"
#include "core/runtime/op_math.hpp"
#include "porta/error.hpp"

namespace porta {
namespace {

using detail::broadcast_shapes;

// Largest byte count any tensor may have: keeps every offset and size computation in int64.
constexpr std::int64_t max_tensor_bytes = std::numeric_limits<std::int64_t>::max() / 4;

[[noreturn]] void fail(ErrorCode code, std::string_view op, std::string_view node,
                       const std::string& message) {
  throw Error(code, std::string(op) + " '" + std::string(node) + "': " + message);
}

std::string str(std::int64_t v) { return std::to_string(v); }

template <std::size_t N>
std::string str(const std::array<std::int64_t, N>& a) {
  return to_string(Shape(a.begin(), a.end()));
}

// Rank 1..8, every dimension >= 1, and a byte size that fits comfortably in int64.
void check_shape(const Shape& shape, DType dtype, std::string_view op, std::string_view node,
                 std::string_view what) {
  if (to_string(dtype) == "?")  // an enum value cast from an integer that names no dtype
    fail(ErrorCode::InvalidArgument, op, node,
         std::string(what) + " dtype " + str(static_cast<int>(dtype)) + " is not f32, f16, bf16, i64, i32 or bool");
  const std::string prefix = std::string(what) + " shape " + to_string(shape);
  if (shape.empty()) fail(ErrorCode::ShapeMismatch, op, node, prefix + " has rank 0; use shape [1] for a scalar");
  if (shape.size() > max_rank)
    fail(ErrorCode::ShapeMismatch, op, node, prefix + " has rank " + str(shape.size()) + ", more than " + str(max_rank));
  std::int64_t bytes = static_cast<std::int64_t>(size_of(dtype));
  for (auto d : shape) {
    if (d < 1) fail(ErrorCode::ShapeMismatch, op, node, prefix + " has dimension " + str(d) + "; every dimension must be >= 1");
    if (__builtin_mul_overflow(bytes, d, &bytes) || bytes > max_tensor_bytes)
      fail(ErrorCode::Overflow, op, node, prefix + " has more bytes than a 64-bit size can address");
  }
}

std::int64_t normalise_axis(std::int64_t axis, std::int64_t rank, std::string_view op,
                            std::string_view node, bool allow_end = false) {
  const std::int64_t hi = allow_end ? rank : rank - 1;
  if (axis < -rank || axis > hi)
    fail(ErrorCode::InvalidArgument, op, node,
         "axis " + str(axis) + " is out of range [" + str(-rank) + ", " + str(hi) + "] for rank " + str(rank));
  return axis < 0 ? axis + rank : axis;
}

void check_window(std::string_view op, std::string_view node, const std::array<std::int64_t, 2>& kernel,
                  const std::array<std::int64_t, 2>& stride, const std::array<std::int64_t, 4>& pad,
                  const std::array<std::int64_t, 2>& dilation) {
  constexpr std::int64_t limit = std::int64_t{1} << 31;  // no real window is larger
  for (int i = 0; i < 2; ++i) {
    if (kernel[i] < 1 || kernel[i] > limit) fail(ErrorCode::InvalidArgument, op, node, "kernel " + str(kernel) + " must be in [1, 2^31]");
    if (stride[i] < 1 || stride[i] > limit) fail(ErrorCode::InvalidArgument, op, node, "stride " + str(stride) + " must be in [1, 2^31]");
    if (dilation[i] < 1 || dilation[i] > limit)
      fail(ErrorCode::InvalidArgument, op, node, "dilation " + str(dilation) + " must be in [1, 2^31]");
  }
  for (auto p : pad)
    if (p < 0 || p > limit) fail(ErrorCode::InvalidArgument, op, node, "padding " + str(pad) + " must be in [0, 2^31] (top, left, bottom, right)");
}

void check_activation(Activation a, std::string_view op, std::string_view node) {
  if (to_string(a) == "?")
    fail(ErrorCode::InvalidArgument, op, node, "activation " + str(static_cast<int>(a)) + " is not a known activation");
}

std::string str(Layout layout) { return std::string(to_string(layout)); }

void check_layout(Layout layout, std::string_view op, std::string_view node) {
  if (to_string(layout) == "?")
    fail(ErrorCode::InvalidArgument, op, node, "layout " + str(static_cast<int>(layout)) + " is neither NCHW nor NHWC");
}

}  // namespace

// --- tensors from outside --------------------------------------------------------------------

void Graph::check_name_free(std::string_view name, std::string_view what) const {
  if (name.empty()) throw Error(ErrorCode::InvalidArgument, std::string(what) + " needs a non-empty name");
  const auto clash = [&](const TensorInfo& t) { return t.name == name; };
  if (std::any_of(tensors_.begin(), tensors_.end(), clash))
    throw Error(ErrorCode::InvalidArgument,
                std::string(what) + " '" + std::string(name) + "': the name is already used in this graph");
}

Tensor Graph::add_tensor(TensorInfo info) {
  tensors_.push_back(std::move(info));
  return Tensor{static_cast<std::int32_t>(tensors_.size() - 1)};
}

Tensor Graph::input(std::string name, Shape shape, DType dtype, Shape strides) {
  check_name_free(name, "input");
  check_shape(shape, dtype, "input", name, "input");
  if (!strides.empty()) {
    if (strides.size() != shape.size())
      fail(ErrorCode::ShapeMismatch, "input", name,
           "strides " + to_string(strides) + " have rank " + str(strides.size()) + " but shape " + to_string(shape) +
               " has rank " + str(shape.size()));
    std::int64_t extent = 1;  // largest addressed element + 1
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (strides[i] < 0) fail(ErrorCode::InvalidArgument, "input", name, "stride " + str(strides[i]) + " is negative");
      std::int64_t reach = 0;
      if (__builtin_mul_overflow(strides[i], shape[i] - 1, &reach) || __builtin_add_overflow(extent, reach, &extent) ||
          extent > max_tensor_bytes / 4)
        fail(ErrorCode::Overflow, "input", name, "strides " + to_string(strides) + " address more than 2^61 elements");
    }
  }
  TensorInfo info{std::move(name), {dtype, std::move(shape)}, Role::Input, -1, std::move(strides), nullptr};
  return add_tensor(std::move(info));
}

Tensor Graph::constant(std::string name, Shape shape, std::span<const float> values, DType dtype) {
  check_name_free(name, "constant");
  check_shape(shape, dtype, "constant", name, "constant");
  TensorDesc desc{dtype, std::move(shape)};
  if (static_cast<std::int64_t>(values.size()) != desc.numel())
    fail(ErrorCode::ShapeMismatch, "constant", name,
         "shape " + to_string(desc.shape) + " needs " + str(desc.numel()) + " values, got " + str(values.size()));
  auto bytes = std::make_shared<std::vector<std::byte>>(desc.bytes());
  for (std::size_t i = 0; i < values.size(); ++i) store_from_f32(bytes->data(), i, dtype, values[i]);
  return add_tensor({std::move(name), std::move(desc), Role::Constant, -1, {}, std::move(bytes)});
}

Tensor Graph::constant_bytes(std::string name, Shape shape, DType dtype, std::span<const std::byte> bytes) {
  return constant_bytes(std::move(name), std::move(shape), dtype,
                        std::make_shared<const std::vector<std::byte>>(bytes.begin(), bytes.end()));
}

Tensor Graph::constant_bytes(std::string name, Shape shape, DType dtype,
                             std::shared_ptr<const std::vector<std::byte>> bytes) {
  if (!bytes) fail(ErrorCode::InvalidArgument, "constant", name, "has no storage (a null pointer)");
  check_name_free(name, "constant");
  check_shape(shape, dtype, "constant", name, "constant");
  TensorDesc desc{dtype, std::move(shape)};
  if (bytes->size() != desc.bytes())
    fail(ErrorCode::ShapeMismatch, "constant", name,
         "shape " + to_string(desc.shape) + " in " + std::string(to_string(dtype)) + " needs " + str(desc.bytes()) +
             " bytes, got " + str(bytes->size()));
  return add_tensor({std::move(name), std::move(desc), Role::Constant, -1, {}, std::move(bytes)});
}

void Graph::output(std::string name, Tensor t) {
  info(t);
  if (name.empty()) throw Error(ErrorCode::InvalidArgument, "an output needs a non-empty name");
  for (const auto& [existing, _] : outputs_)
    if (existing == name) throw Error(ErrorCode::InvalidArgument, "output '" + name + "' is already defined");
  outputs_.emplace_back(std::move(name), t);
}

const TensorInfo& Graph::info(Tensor t) const {
  if (t.id < 0 || static_cast<std::size_t>(t.id) >= tensors_.size())
    throw Error(ErrorCode::NotFound, "tensor handle " + str(t.id) + " does not belong to this graph (it has " +
                                         str(tensors_.size()) + " tensors)");
  return tensors_[static_cast<std::size_t>(t.id)];
}

namespace {

std::vector<Tensor> with_role(const std::vector<TensorInfo>& tensors, Role role) {
  std::vector<Tensor> result;
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].role == role) result.push_back(Tensor{static_cast<std::int32_t>(i)});
  return result;
}

}  // namespace

std::vector<Tensor> Graph::inputs() const { return with_role(tensors_, Role::Input); }
std::vector<Tensor> Graph::variables() const { return with_role(tensors_, Role::Variable); }

Tensor Graph::variable(std::string name, Shape shape, std::span<const float> initial, DType dtype) {
  check_name_free(name, "variable");
  check_shape(shape, dtype, "variable", name, "variable");
  const TensorDesc desc{dtype, shape};
  if (!initial.empty() && static_cast<std::int64_t>(initial.size()) != desc.numel())
    fail(ErrorCode::ShapeMismatch, "variable", name,
         "shape " + to_string(desc.shape) + " needs " + str(desc.numel()) + " initial values, got " + str(initial.size()));
  auto bytes = std::make_shared<std::vector<std::byte>>(desc.bytes());
  for (std::size_t i = 0; i < initial.size(); ++i) store_from_f32(bytes->data(), i, dtype, initial[i]);
  return variable_bytes(std::move(name), std::move(shape), dtype, std::move(bytes));
}

Tensor Graph::variable_bytes(std::string name, Shape shape, DType dtype,
                             std::shared_ptr<const std::vector<std::byte>> bytes) {
  if (!bytes) fail(ErrorCode::InvalidArgument, "variable", name, "has no initial value (a null pointer)");
  check_name_free(name, "variable");
  check_shape(shape, dtype, "variable", name, "variable");
  TensorDesc desc{dtype, std::move(shape)};
  if (bytes->size() != desc.bytes())
    fail(ErrorCode::ShapeMismatch, "variable", name,
         "shape " + to_string(desc.shape) + " in " + std::string(to_string(dtype)) + " needs " + str(desc.bytes()) +
             " bytes, got " + str(bytes->size()));
  return add_tensor({std::move(name), std::move(desc), Role::Variable, -1, {}, std::move(bytes)});
}

void Graph::assign(Tensor variable, Tensor value) {
  const TensorInfo& var = info(variable);
  const TensorInfo& val = info(value);
  if (var.role != Role::Variable)
    fail(ErrorCode::InvalidArgument, "assign", var.name, "is not a variable (make it with Graph::variable)");
  if (val.role == Role::Variable)
    fail(ErrorCode::InvalidArgument, "assign", var.name,
         "its new value is the variable '" + val.name + "' itself; assign the result of an op instead");
  if (val.desc != var.desc)
    fail(ErrorCode::ShapeMismatch, "assign", var.name,
         "is " + to_string(var.desc.shape) + " " + std::string(to_string(var.desc.dtype)) + ", its new value '" +
             val.name + "' is " + to_string(val.desc.shape) + " " + std::string(to_string(val.desc.dtype)));
  for (const auto& [v, _] : assignments_)
    if (v == variable) fail(ErrorCode::InvalidArgument, "assign", var.name, "already has a new value assigned");
  assignments_.emplace_back(variable, value);
}

// --- op plumbing -----------------------------------------------------------------------------

std::string Graph::node_name(OpKind op, std::string name) const {
  if (name.empty()) name = std::string(to_string(op)) + "_" + str(nodes_.size());
  check_name_free(name, to_string(op));
  return name;
}

namespace {

// Ops that only move, index, compare or select elements: they take integer and bool tensors too.
bool takes_any_dtype(OpKind op) {
  switch (op) {
    case OpKind::Reshape: case OpKind::Transpose: case OpKind::Concat: case OpKind::Cast: case OpKind::Slice:
    case OpKind::Pad: case OpKind::Expand: case OpKind::Gather: case OpKind::Compare: case OpKind::Logical:
    case OpKind::Where:
      return true;
    default:
      return false;
  }
}

// Ops whose i64/i32 operand is a class index (their builders check the rest): the loss and its gradient.
bool takes_class_indices(OpKind op, std::size_t operand) {
  return operand == 1 && (op == OpKind::SoftmaxCrossEntropy || op == OpKind::SoftmaxCrossEntropyBackward);
}

}  // namespace

Tensor Graph::add_node(OpKind op, OpParams params, std::vector<Tensor> inputs, TensorDesc out, std::string name) {
  check_shape(out.shape, out.dtype, to_string(op), name, "result");
  if (!takes_any_dtype(op))
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (const Tensor t = inputs[i]; !is_float(dtype(t)) && !takes_class_indices(op, i))
        fail(ErrorCode::Unsupported, to_string(op), name,
             "operand '" + info(t).name + "' is " + std::string(to_string(dtype(t))) +
                 "; arithmetic takes f32, f16 or bf16 (integer and bool tensors only move, index, compare and "
                 "select: cast them first)");
  const auto index = static_cast<std::int32_t>(nodes_.size());
  const Tensor result = add_tensor({name, std::move(out), Role::Intermediate, index, {}, nullptr});
  nodes_.push_back({std::move(name), op, std::move(params), std::move(inputs), result});
  return result;
}

namespace {

// Every operand of an op shares one dtype (Cast is the way to change it).
void check_same_dtype(const Graph& g, std::span<const Tensor> ts, std::string_view op, std::string_view node) {
  for (const Tensor t : ts)
    if (g.dtype(t) != g.dtype(ts[0]))
      fail(ErrorCode::DTypeMismatch, op, node,
           "operands mix " + std::string(to_string(g.dtype(ts[0]))) + " (" + g.info(ts[0]).name + ") and " +
               std::string(to_string(g.dtype(t))) + " (" + g.info(t).name + "); insert a cast");
}

}  // namespace

Tensor Graph::binary(OpKind op, Tensor a, Tensor b, std::string name) {
  name = node_name(op, std::move(name));
  Shape shape;
  if (!broadcast_shapes(this->shape(a), this->shape(b), shape))
    fail(ErrorCode::ShapeMismatch, to_string(op), name,
         "shapes " + to_string(this->shape(a)) + " and " + to_string(this->shape(b)) + " do not broadcast");
  const Tensor ts[] = {a, b};
  check_same_dtype(*this, ts, to_string(op), name);
  return add_node(op, std::monostate{}, {a, b}, {dtype(a), std::move(shape)}, std::move(name));
}

Tensor Graph::unary(OpKind op, Tensor x, OpParams params, std::string name) {
  name = node_name(op, std::move(name));
  return add_node(op, std::move(params), {x}, desc(x), std::move(name));
}


// --- ops ---------------------------------------------------------------------------------------

Tensor Graph::matmul(Tensor a, Tensor b, const MatMulParams& p, std::string name) {
  name = node_name(OpKind::MatMul, std::move(name));
  const Shape &sa = this->shape(a), &sb = this->shape(b);
  const Tensor ts[] = {a, b};
  check_same_dtype(*this, ts, "matmul", name);
  if ((sa.size() == 1 && p.trans_a) || (sb.size() == 1 && p.trans_b))
    fail(ErrorCode::InvalidArgument, "matmul", name, "a vector operand cannot be transposed");
  // Not detail::matmul_dims: it lists every batch's offsets, and a batch may be huge here.
  const std::int64_t k_a = sa.size() == 1 ? sa[0] : (p.trans_a ? sa[sa.size() - 2] : sa.back());
  const std::int64_t k_b = sb.size() == 1 ? sb[0] : (p.trans_b ? sb.back() : sb[sb.size() - 2]);
  if (k_a != k_b)
    fail(ErrorCode::ShapeMismatch, "matmul", name,
         "inner dimensions differ: A " + to_string(sa) + (p.trans_a ? " (transposed)" : "") + " has K=" + str(k_a) +
             ", B " + to_string(sb) + (p.trans_b ? " (transposed)" : "") + " has K=" + str(k_b));
  Shape batch_a(sa.begin(), sa.end() - std::min<std::size_t>(2, sa.size()));
  Shape batch_b(sb.begin(), sb.end() - std::min<std::size_t>(2, sb.size()));
  Shape out;
  if (!broadcast_shapes(batch_a, batch_b, out))
    fail(ErrorCode::ShapeMismatch, "matmul", name,
         "batch dimensions " + to_string(batch_a) + " and " + to_string(batch_b) + " do not broadcast");
  if (sa.size() > 1) out.push_back(p.trans_a ? sa.back() : sa[sa.size() - 2]);
  if (sb.size() > 1) out.push_back(p.trans_b ? sb[sb.size() - 2] : sb.back());
  if (out.empty()) out.push_back(1);  // vector . vector: a one-element result, porta has no rank 0
  return add_node(OpKind::MatMul, p, {a, b}, {dtype(a), std::move(out)}, std::move(name));
}

Tensor Graph::gemm(Tensor a, Tensor b, const GemmParams& p, Tensor c, std::string name) {
  name = node_name(OpKind::Gemm, std::move(name));
  const Shape &sa = this->shape(a), &sb = this->shape(b);
  if (sa.size() != 2 || sb.size() != 2)
    fail(ErrorCode::ShapeMismatch, "gemm", name, "A " + to_string(sa) + " and B " + to_string(sb) + " must both be 2-D");
  const std::int64_t m = p.trans_a ? sa[1] : sa[0], k = p.trans_a ? sa[0] : sa[1];
  const std::int64_t kb = p.trans_b ? sb[1] : sb[0], n = p.trans_b ? sb[0] : sb[1];
  if (k != kb)
    fail(ErrorCode::ShapeMismatch, "gemm", name,
         "inner dimensions differ: A " + to_string(sa) + " gives K=" + str(k) + ", B " + to_string(sb) + " gives K=" + str(kb));
  if (!std::isfinite(p.alpha) || !std::isfinite(p.beta))
    fail(ErrorCode::InvalidArgument, "gemm", name, "alpha and beta must be finite");
  check_activation(p.activation, "gemm", name);
  std::vector<Tensor> inputs{a, b};
  if (c) {
    Shape joined;
    const Shape& sc = this->shape(c);
    if (sc.size() > 2 || !broadcast_shapes(sc, {m, n}, joined) || joined != Shape{m, n})
      fail(ErrorCode::ShapeMismatch, "gemm", name,
           "C " + to_string(sc) + " does not broadcast to the result [" + str(m) + ", " + str(n) + "]");
    inputs.push_back(c);
  }
  check_same_dtype(*this, inputs, "gemm", name);
  return add_node(OpKind::Gemm, p, std::move(inputs), {dtype(a), {m, n}}, std::move(name));
}

Tensor Graph::conv2d(Tensor x, Tensor w, const Conv2dParams& params, Tensor bias, std::string name,
                     Tensor residual) {
  Conv2dParams p = params;
  p.residual = static_cast<bool>(residual);
  name = node_name(OpKind::Conv2d, std::move(name));
  const Shape &sx = this->shape(x), &sw = this->shape(w);
  check_layout(p.layout, "conv2d", name);
  if (sx.size() != 4)
    fail(ErrorCode::ShapeMismatch, "conv2d", name, "input " + to_string(sx) + " must be 4-D " + str(p.layout));
  const std::int64_t channels = sx[p.layout == Layout::NHWC ? 3 : 1];
  if (sw.size() != 4)
    fail(ErrorCode::ShapeMismatch, "conv2d", name, "weights " + to_string(sw) + " must be 4-D [K, C/groups, R, S]");
  check_window("conv2d", name, {sw[2], sw[3]}, p.stride, p.pad, p.dilation);
  check_activation(p.activation, "conv2d", name);
  if (p.groups < 1 || channels % p.groups != 0 || sw[0] % p.groups != 0)
    fail(ErrorCode::InvalidArgument, "conv2d", name,
         "groups " + str(p.groups) + " must be >= 1 and divide input channels " + str(channels) + " and filters " + str(sw[0]));
  if (sw[1] != channels / p.groups)
    fail(ErrorCode::ShapeMismatch, "conv2d", name,
         "weights " + to_string(sw) + " have " + str(sw[1]) + " channels per group, " + str(p.layout) + " input " +
             to_string(sx) + " with groups " + str(p.groups) + " needs " + str(channels / p.groups));
  const auto d = detail::conv_dims(sx, sw, p);
  if (d.p < 1 || d.q < 1)
    fail(ErrorCode::ShapeMismatch, "conv2d", name,
         "the dilated kernel [" + str(p.dilation[0] * (sw[2] - 1) + 1) + ", " + str(p.dilation[1] * (sw[3] - 1) + 1) +
             "] does not fit the padded input " + to_string(sx) + " with padding " + str(p.pad));
  std::vector<Tensor> inputs{x, w};
  if (bias) {
    if (this->shape(bias) != Shape{sw[0]})
      fail(ErrorCode::ShapeMismatch, "conv2d", name,
           "bias " + to_string(shape(bias)) + " must be [" + str(sw[0]) + "], one value per filter");
    inputs.push_back(bias);
  }
  const Shape out = detail::activation_shape(p.layout, d.n, d.k, d.p, d.q);
  if (residual) {
    if (this->shape(residual) != out)
      fail(ErrorCode::ShapeMismatch, "conv2d", name,
           "residual " + to_string(shape(residual)) + " must have the output's shape " + to_string(out));
    inputs.push_back(residual);
  }
  check_same_dtype(*this, inputs, "conv2d", name);
  return add_node(OpKind::Conv2d, p, std::move(inputs), {dtype(x), out}, std::move(name));
}

Tensor Graph::add(Tensor a, Tensor b, std::string name) { return binary(OpKind::Add, a, b, std::move(name)); }
Tensor Graph::sub(Tensor a, Tensor b, std::string name) { return binary(OpKind::Sub, a, b, std::move(name)); }
Tensor Graph::mul(Tensor a, Tensor b, std::string name) { return binary(OpKind::Mul, a, b, std::move(name)); }
Tensor Graph::div(Tensor a, Tensor b, std::string name) { return binary(OpKind::Div, a, b, std::move(name)); }

Tensor Graph::relu(Tensor x, std::string name) { return unary(OpKind::Relu, x, std::monostate{}, std::move(name)); }
Tensor Graph::relu6(Tensor x, std::string name) { return clip(x, 0.0f, 6.0f, std::move(name)); }
Tensor Graph::sigmoid(Tensor x, std::string name) { return unary(OpKind::Sigmoid, x, std::monostate{}, std::move(name)); }
Tensor Graph::silu(Tensor x, std::string name) { return unary(OpKind::Silu, x, std::monostate{}, std::move(name)); }
Tensor Graph::tanh(Tensor x, std::string name) { return unary(OpKind::Tanh, x, std::monostate{}, std::move(name)); }
Tensor Graph::gelu(Tensor x, const GeluParams& p, std::string name) { return unary(OpKind::Gelu, x, p, std::move(name)); }

Tensor Graph::erf(Tensor x, std::string name) { return unary(OpKind::Erf, x, std::monostate{}, std::move(name)); }
Tensor Graph::sqrt(Tensor x, std::string name) { return unary(OpKind::Sqrt, x, std::monostate{}, std::move(name)); }
Tensor Graph::reciprocal(Tensor x, std::string name) {
  return unary(OpKind::Reciprocal, x, std::monostate{}, std::move(name));
}
Tensor Graph::hard_swish(Tensor x, std::string name) {
  return unary(OpKind::HardSwish, x, std::monostate{}, std::move(name));
}
Tensor Graph::pow(Tensor a, Tensor b, std::string name) { return binary(OpKind::Pow, a, b, std::move(name)); }

Tensor Graph::hard_sigmoid(Tensor x, const HardSigmoidParams& p, std::string name) {
  if (!std::isfinite(p.alpha) || !std::isfinite(p.beta))
    fail(ErrorCode::InvalidArgument, "hard_sigmoid", name.empty() ? "hard_sigmoid" : name,
         "alpha " + std::to_string(p.alpha) + " and beta " + std::to_string(p.beta) + " must be finite");
  return unary(OpKind::HardSigmoid, x, p, std::move(name));
}

Tensor Graph::clip(Tensor x, float min, float max, std::string name) {
  if (std::isnan(min) || std::isnan(max) || min > max)
    fail(ErrorCode::InvalidArgument, "clip", name.empty() ? "clip" : name,
         "bounds [" + std::to_string(min) + ", " + std::to_string(max) + "] must be numbers with min <= max");
  return unary(OpKind::Clip, x, ClipParams{min, max}, std::move(name));
}

Tensor Graph::batchnorm(Tensor x, Tensor scale, Tensor bias, Tensor mean, Tensor var, const BatchNormParams& p,
                        std::string name) {
  name = node_name(OpKind::BatchNorm, std::move(name));
  const Shape& sx = this->shape(x);
  if (sx.size() < 2) fail(ErrorCode::ShapeMismatch, "batchnorm", name, "input " + to_string(sx) + " needs a channel dimension");
  const Tensor ts[] = {x, scale, bias, mean, var};
  for (const Tensor t : std::span(ts).subspan(1))
    if (this->shape(t) != Shape{sx[1]})
      fail(ErrorCode::ShapeMismatch, "batchnorm", name,
           info(t).name + " " + to_string(shape(t)) + " must be [" + str(sx[1]) + "], one value per channel");
  check_same_dtype(*this, ts, "batchnorm", name);
  if (!(p.epsilon >= 0.0f) || !std::isfinite(p.epsilon))
    fail(ErrorCode::InvalidArgument, "batchnorm", name, "epsilon " + std::to_string(p.epsilon) + " must be finite and >= 0");
  return add_node(OpKind::BatchNorm, p, {x, scale, bias, mean, var}, desc(x), std::move(name));
}

namespace {

// A pool's output shape, after checking x and the window (max_pool2d_backward checks its dy with it).
Shape pooled_shape(const Shape& sx, OpKind op, const Pool2dParams& p, const std::string& name) {
  check_layout(p.layout, to_string(op), name);
  if (sx.size() != 4)
    fail(ErrorCode::ShapeMismatch, to_string(op), name, "input " + to_string(sx) + " must be 4-D " + str(p.layout));
  check_window(to_string(op), name, p.kernel, p.stride, p.pad, p.dilation);
  for (int i = 0; i < 2; ++i) {
    const std::int64_t span = p.dilation[i] * (p.kernel[i] - 1) + 1;
    if (p.pad[i] >= span || p.pad[i + 2] >= span)
      fail(ErrorCode::InvalidArgument, to_string(op), name,
           "padding " + str(p.pad) + " must be smaller than the dilated window " + str(span) +
               ", or some windows would see only padding");
  }
  const auto d = detail::pool_dims(sx, p);
  if (d.p < 1 || d.q < 1)
    fail(ErrorCode::ShapeMismatch, to_string(op), name,
         "window " + str(p.kernel) + " does not fit the padded input " + to_string(sx));
  return detail::activation_shape(p.layout, d.n, d.c, d.p, d.q);
}

}  // namespace

Tensor Graph::pool(OpKind op, Tensor x, const Pool2dParams& p, std::string name) {
  name = node_name(op, std::move(name));
  Shape out = pooled_shape(this->shape(x), op, p, name);
  return add_node(op, p, {x}, {dtype(x), std::move(out)}, std::move(name));
}

Tensor Graph::max_pool2d(Tensor x, const Pool2dParams& p, std::string name) {
  return pool(OpKind::MaxPool2d, x, p, std::move(name));
}
Tensor Graph::avg_pool2d(Tensor x, const Pool2dParams& p, std::string name) {
  return pool(OpKind::AvgPool2d, x, p, std::move(name));
}

Tensor Graph::global_avg_pool(Tensor x, std::string name) { return global_avg_pool(x, {}, std::move(name)); }

Tensor Graph::global_avg_pool(Tensor x, const GlobalPoolParams& p, std::string name) {
  name = node_name(OpKind::GlobalAvgPool, std::move(name));
  const Shape& sx = this->shape(x);
  check_layout(p.layout, "global_avg_pool", name);
  if (sx.size() != 4)
    fail(ErrorCode::ShapeMismatch, "global_avg_pool", name, "input " + to_string(sx) + " must be 4-D " + str(p.layout));
  const std::int64_t channels = sx[p.layout == Layout::NHWC ? 3 : 1];
  return add_node(OpKind::GlobalAvgPool, p, {x}, {dtype(x), detail::activation_shape(p.layout, sx[0], channels, 1, 1)},
                  std::move(name));
}

Tensor Graph::softmax(Tensor x, std::int64_t axis, std::string name) {
  name = node_name(OpKind::Softmax, std::move(name));
  axis = normalise_axis(axis, static_cast<std::int64_t>(this->shape(x).size()), "softmax", name);
  return add_node(OpKind::Softmax, SoftmaxParams{axis}, {x}, desc(x), std::move(name));
}

Tensor Graph::softmax(Tensor x, std::int64_t axis, Tensor mask, std::string name) {
  name = node_name(OpKind::Softmax, std::move(name));
  Shape joined;
  if (!broadcast_shapes(this->shape(x), this->shape(mask), joined) || joined != this->shape(x))
    fail(ErrorCode::ShapeMismatch, "softmax", name,
         "mask " + to_string(this->shape(mask)) + " does not broadcast to the scores " + to_string(this->shape(x)));
  const Tensor masked = add(x, mask, name + "/mask");
  return softmax(masked, axis, std::move(name));
}

Tensor Graph::reduce(Tensor x, ReduceParams p, std::string name) {
  name = node_name(OpKind::Reduce, std::move(name));
  const Shape& sx = this->shape(x);
  const auto rank = static_cast<std::int64_t>(sx.size());
  if (p.axes.empty())
    for (std::int64_t d = 0; d < rank; ++d) p.axes.push_back(d);
  for (auto& axis : p.axes) axis = normalise_axis(axis, rank, "reduce", name);
  std::sort(p.axes.begin(), p.axes.end());
  if (std::adjacent_find(p.axes.begin(), p.axes.end()) != p.axes.end())
    fail(ErrorCode::InvalidArgument, "reduce", name, "axes " + to_string(p.axes) + " name an axis twice");
  Shape out;
  for (std::int64_t d = 0; d < rank; ++d) {
    const bool reduced = std::binary_search(p.axes.begin(), p.axes.end(), d);
    if (!reduced) out.push_back(sx[static_cast<std::size_t>(d)]);
    else if (p.keepdims) out.push_back(1);
  }
  if (out.empty()) out = {1};
  return add_node(OpKind::Reduce, std::move(p), {x}, {dtype(x), std::move(out)}, std::move(name));
}

Tensor Graph::norm(OpKind op, Tensor x, Tensor scale, Tensor bias, NormParams p, std::string name) {
  name = node_name(op, std::move(name));
  const Shape& sx = this->shape(x);
  p.axis = normalise_axis(p.axis, static_cast<std::int64_t>(sx.size()), to_string(op), name);
  if (!(p.epsilon >= 0.0f) || !std::isfinite(p.epsilon))
    fail(ErrorCode::InvalidArgument, to_string(op), name,
         "epsilon " + std::to_string(p.epsilon) + " must be finite and >= 0");
  const Shape normalised(sx.begin() + p.axis, sx.end());
  std::vector<Tensor> inputs{x, scale};
  if (bias) inputs.push_back(bias);
  for (const Tensor t : std::span(inputs).subspan(1))
    if (this->shape(t) != normalised)
      fail(ErrorCode::ShapeMismatch, to_string(op), name,
           info(t).name + " " + to_string(this->shape(t)) + " must have the normalised axes' shape " +
               to_string(normalised));
  check_same_dtype(*this, inputs, to_string(op), name);
  return add_node(op, p, std::move(inputs), desc(x), std::move(name));
}

Tensor Graph::layer_norm(Tensor x, Tensor scale, Tensor bias, const NormParams& p, std::string name) {
  return norm(OpKind::LayerNorm, x, scale, bias, p, std::move(name));
}

Tensor Graph::rms_norm(Tensor x, Tensor scale, const NormParams& p, std::string name) {
  return norm(OpKind::RmsNorm, x, scale, {}, p, std::move(name));
}

Tensor Graph::reshape(Tensor x, Shape shape, std::string name) {
  name = node_name(OpKind::Reshape, std::move(name));
  const Shape& sx = this->shape(x);
  const std::int64_t count = desc(x).numel();
  std::int64_t known = 1, infer_at = -1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) {
      if (i >= sx.size())
        fail(ErrorCode::ShapeMismatch, "reshape", name,
             "target " + to_string(shape) + " copies dimension " + str(i) + " (0) but the input " + to_string(sx) +
                 " has rank " + str(sx.size()));
      shape[i] = sx[i];
    }
    if (shape[i] == -1) {
      if (infer_at >= 0) fail(ErrorCode::InvalidArgument, "reshape", name, "target " + to_string(shape) + " has more than one -1");
      infer_at = static_cast<std::int64_t>(i);
    } else if (shape[i] < 1) {
      fail(ErrorCode::InvalidArgument, "reshape", name, "target " + to_string(shape) + " has dimension " + str(shape[i]));
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      fail(ErrorCode::Overflow, "reshape", name, "target " + to_string(shape) + " overflows 64 bits");
    }
  }
  if (infer_at >= 0) {
    if (count % known != 0)
      fail(ErrorCode::ShapeMismatch, "reshape", name,
           "cannot infer -1 in " + to_string(shape) + ": " + str(count) + " elements are not a multiple of " + str(known));
    shape[static_cast<std::size_t>(infer_at)] = count / known;
  } else if (known != count) {
    fail(ErrorCode::ShapeMismatch, "reshape", name,
         "input " + to_string(sx) + " has " + str(count) + " elements, target " + to_string(shape) + " has " + str(known));
  }
  return add_node(OpKind::Reshape, ReshapeParams{shape}, {x}, {dtype(x), shape}, std::move(name));
}

Tensor Graph::flatten(Tensor x, std::int64_t axis, std::string name) {
  const Shape& sx = this->shape(x);
  axis = normalise_axis(axis, static_cast<std::int64_t>(sx.size()), "flatten", name.empty() ? "flatten" : name, true);
  std::int64_t outer = 1;
  for (std::int64_t i = 0; i < axis; ++i) outer *= sx[static_cast<std::size_t>(i)];
  return reshape(x, {outer, desc(x).numel() / outer}, std::move(name));
}

Tensor Graph::transpose(Tensor x, std::vector<std::int64_t> perm, std::string name) {
  name = node_name(OpKind::Transpose, std::move(name));
  const Shape& sx = this->shape(x);
  const auto rank = static_cast<std::int64_t>(sx.size());
  if (perm.empty())  // ONNX default: reverse the dimensions
    for (std::int64_t i = rank; i-- > 0;) perm.push_back(i);
  std::vector<bool> seen(sx.size(), false);
  bool valid = static_cast<std::int64_t>(perm.size()) == rank;
  for (auto& axis : perm) {
    if (!valid || axis < -rank || axis >= rank) { valid = false; break; }
    if (axis < 0) axis += rank;
    if (seen[static_cast<std::size_t>(axis)]) { valid = false; break; }
    seen[static_cast<std::size_t>(axis)] = true;
  }
  if (!valid)
    fail(ErrorCode::InvalidArgument, "transpose", name,
         "perm " + to_string(perm) + " is not a permutation of the " + str(rank) + " dimensions of " + to_string(sx));
  Shape out;
  for (auto axis : perm) out.push_back(sx[static_cast<std::size_t>(axis)]);
  return add_node(OpKind::Transpose, TransposeParams{std::move(perm)}, {x}, {dtype(x), std::move(out)},
                  std::move(name));
}

Tensor Graph::concat(std::span<const Tensor> xs, std::int64_t axis, std::string name) {
  name = node_name(OpKind::Concat, std::move(name));
  if (xs.empty()) fail(ErrorCode::InvalidArgument, "concat", name, "needs at least one input");
  Shape out = this->shape(xs[0]);
  axis = normalise_axis(axis, static_cast<std::int64_t>(out.size()), "concat", name);
  const auto a = static_cast<std::size_t>(axis);
  for (std::size_t i = 1; i < xs.size(); ++i) {
    const Shape& s = this->shape(xs[i]);
    bool fits = s.size() == out.size();
    for (std::size_t d = 0; fits && d < s.size(); ++d) fits = d == a || s[d] == out[d];
    if (!fits)
      fail(ErrorCode::ShapeMismatch, "concat", name,
           "input " + str(i) + " " + to_string(s) + " does not match input 0 " + to_string(shape(xs[0])) +
               " outside axis " + str(axis));
    if (__builtin_add_overflow(out[a], s[a], &out[a]))
      fail(ErrorCode::Overflow, "concat", name,
           "input " + str(i) + " " + to_string(s) + " makes axis " + str(axis) + " longer than 64 bits can count");
  }
  check_same_dtype(*this, xs, "concat", name);
  return add_node(OpKind::Concat, ConcatParams{axis}, {xs.begin(), xs.end()}, {dtype(xs[0]), std::move(out)},
                  std::move(name));
}

Tensor Graph::cast(Tensor x, DType to, std::string name) {
  name = node_name(OpKind::Cast, std::move(name));
  return add_node(OpKind::Cast, CastParams{to}, {x}, {to, this->shape(x)}, std::move(name));
}

Tensor Graph::slice(Tensor x, const SliceParams& p, std::string name) {
  name = node_name(OpKind::Slice, std::move(name));
  const Shape& sx = this->shape(x);
  const auto rank = static_cast<std::int64_t>(sx.size());
  const std::size_t count = p.starts.size();
  const std::string lists = "starts " + to_string(p.starts) + ", ends " + to_string(p.ends) + ", axes " +
                            to_string(p.axes) + " and steps " + to_string(p.steps);
  const auto fits = [&](const std::vector<std::int64_t>& v) { return v.empty() || v.size() == count; };
  if (p.ends.size() != count || !fits(p.axes) || !fits(p.steps))
    fail(ErrorCode::InvalidArgument, "slice", name,
         lists + " must have one entry per sliced axis (axes and steps may be empty)");
  if (static_cast<std::int64_t>(count) > rank)
    fail(ErrorCode::InvalidArgument, "slice", name,
         "slices " + str(count) + " axes of the rank-" + str(rank) + " input");
  SliceParams q{p.starts, p.ends, {}, {}};
  std::vector<bool> seen(sx.size(), false);
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t given = p.axes.empty() ? static_cast<std::int64_t>(i) : p.axes[i];
    const std::int64_t axis = normalise_axis(given, rank, "slice", name);
    if (seen[static_cast<std::size_t>(axis)])
      fail(ErrorCode::InvalidArgument, "slice", name,
           "axes " + to_string(p.axes) + " name axis " + str(axis) + " twice");
    seen[static_cast<std::size_t>(axis)] = true;
    const std::int64_t step = p.steps.empty() ? 1 : p.steps[i];
    if (step == 0 || step == std::numeric_limits<std::int64_t>::min())
      fail(ErrorCode::InvalidArgument, "slice", name,
           "step " + str(step) + " along axis " + str(axis) + " is not allowed");
    q.axes.push_back(axis);
    q.steps.push_back(step);
  }
  Shape out;
  for (const detail::SliceDim& d : detail::slice_dims(sx, q)) out.push_back(d.length);
  for (std::size_t d = 0; d < out.size(); ++d)
    if (out[d] < 1)
      fail(ErrorCode::ShapeMismatch, "slice", name,
           "takes no element of axis " + str(d) + " of " + to_string(sx) + " (" + lists + ")");
  return add_node(OpKind::Slice, std::move(q), {x}, {dtype(x), std::move(out)}, std::move(name));
}

std::vector<Tensor> Graph::split(Tensor x, std::int64_t axis, std::span<const std::int64_t> sizes, std::string name) {
  name = node_name(OpKind::Slice, std::move(name));
  const Shape& sx = this->shape(x);
  axis = normalise_axis(axis, static_cast<std::int64_t>(sx.size()), "split", name);
  std::int64_t total = 0;
  for (const std::int64_t size : sizes)
    if (size < 1 || __builtin_add_overflow(total, size, &total)) total = -1;
  const std::int64_t extent = sx[static_cast<std::size_t>(axis)];
  if (sizes.empty() || total != extent)
    fail(ErrorCode::ShapeMismatch, "split", name,
         "sizes " + to_string(Shape(sizes.begin(), sizes.end())) + " must be >= 1 and add up to axis " + str(axis) +
             " of " + to_string(sx) + " (" + str(extent) + ")");
  std::vector<Tensor> pieces;
  std::int64_t start = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    pieces.push_back(slice(x, {{start}, {start + sizes[i]}, {axis}, {1}}, name + "_" + str(i)));
    start += sizes[i];
  }
  return pieces;
}

Tensor Graph::pad(Tensor x, const PadParams& p, std::string name) {
  name = node_name(OpKind::Pad, std::move(name));
  const Shape& sx = this->shape(x);
  const std::size_t rank = sx.size();
  if (to_string(p.mode) == "?")
    fail(ErrorCode::InvalidArgument, "pad", name,
         "mode " + str(static_cast<int>(p.mode)) + " is not constant, reflect or edge");
  if (p.pads.size() != 2 * rank)
    fail(ErrorCode::InvalidArgument, "pad", name,
         "pads " + to_string(p.pads) + " must have " + str(2 * rank) + " entries (the begins, then the ends) for " +
             to_string(sx));
  Shape out = sx;
  constexpr std::int64_t limit = std::int64_t{1} << 40;  // keeps the sums below in range
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t begin = p.pads[d], end = p.pads[rank + d];
    if (begin < -limit || begin > limit || end < -limit || end > limit)
      fail(ErrorCode::InvalidArgument, "pad", name, "pads " + to_string(p.pads) + " must be within +-2^40");
    if (p.mode == PadMode::Reflect && (begin >= sx[d] || end >= sx[d]))
      fail(ErrorCode::InvalidArgument, "pad", name,
           "reflect pads " + to_string(p.pads) + " must be smaller than each padded dimension of " + to_string(sx));
    if (p.mode != PadMode::Constant && (begin < 0 || end < 0))
      fail(ErrorCode::InvalidArgument, "pad", name,
           "negative pads " + to_string(p.pads) + " crop; only constant mode takes them");
    out[d] = sx[d] + begin + end;
  }
  check_shape(out, dtype(x), "pad", name, "output");
  return add_node(OpKind::Pad, p, {x}, {dtype(x), std::move(out)}, std::move(name));
}

Tensor Graph::expand(Tensor x, Shape shape, std::string name) {
  name = node_name(OpKind::Expand, std::move(name));
  Shape out;
  if (!broadcast_shapes(this->shape(x), shape, out))
    fail(ErrorCode::ShapeMismatch, "expand", name,
         "input " + to_string(this->shape(x)) + " does not broadcast with shape " + to_string(shape));
  check_shape(out, dtype(x), "expand", name, "output");
  return add_node(OpKind::Expand, ExpandParams{out}, {x}, {dtype(x), out}, std::move(name));
}

// --- indexing and masks ------------------------------------------------------------------------

namespace {

void check_bool(const Graph& g, Tensor t, std::string_view op, std::string_view node, std::string_view what) {
  if (g.dtype(t) != DType::boolean)
    fail(ErrorCode::DTypeMismatch, op, node,
         std::string(what) + " '" + g.info(t).name + "' is " + std::string(to_string(g.dtype(t))) +
             "; it must be bool (compare, or cast to bool)");
}

// The numpy broadcast of every operand's shape.
Shape broadcast_all(const Graph& g, std::span<const Tensor> ts, std::string_view op, std::string_view node) {
  Shape out = g.shape(ts[0]);
  for (const Tensor t : ts.subspan(1)) {
    Shape joined;
    if (!broadcast_shapes(out, g.shape(t), joined))
      fail(ErrorCode::ShapeMismatch, op, node,
           "shapes " + to_string(out) + " and " + to_string(g.shape(t)) + " (" + g.info(t).name + ") do not broadcast");
    out = std::move(joined);
  }
  return out;
}

}  // namespace

Tensor Graph::gather(Tensor data, Tensor indices, std::int64_t axis, std::string name) {
  name = node_name(OpKind::Gather, std::move(name));
  const Shape& sd = this->shape(data);
  axis = normalise_axis(axis, static_cast<std::int64_t>(sd.size()), "gather", name);
  if (dtype(indices) != DType::i64 && dtype(indices) != DType::i32)
    fail(ErrorCode::DTypeMismatch, "gather", name,
         "indices '" + info(indices).name + "' are " + std::string(to_string(dtype(indices))) +
             "; they must be i64 or i32");
  const auto a = static_cast<std::ptrdiff_t>(axis);
  Shape out(sd.begin(), sd.begin() + a);
  out.insert(out.end(), this->shape(indices).begin(), this->shape(indices).end());
  out.insert(out.end(), sd.begin() + a + 1, sd.end());
  if (out.size() > max_rank)
    fail(ErrorCode::ShapeMismatch, "gather", name,
         "data " + to_string(sd) + " indexed by " + to_string(this->shape(indices)) + " would have rank " +
             str(out.size()) + ", more than " + str(max_rank));
  return add_node(OpKind::Gather, GatherParams{axis}, {data, indices}, {dtype(data), std::move(out)}, std::move(name));
}

Tensor Graph::compare(Tensor a, Tensor b, Comparison op, std::string name) {
  name = node_name(OpKind::Compare, std::move(name));
  if (to_string(op) == "?")
    fail(ErrorCode::InvalidArgument, "compare", name, "comparison " + str(static_cast<int>(op)) + " is not known");
  const Tensor ts[] = {a, b};
  check_same_dtype(*this, ts, "compare", name);
  Shape out = broadcast_all(*this, ts, "compare", name);
  return add_node(OpKind::Compare, CompareParams{op}, {a, b}, {DType::boolean, std::move(out)}, std::move(name));
}

Tensor Graph::logical(LogicalOp op, std::vector<Tensor> xs, std::string name) {
  name = node_name(OpKind::Logical, std::move(name));
  if (to_string(op) == "?" || xs.size() != (op == LogicalOp::Not ? 1u : 2u))
    fail(ErrorCode::InvalidArgument, "logical", name,
         "op " + str(static_cast<int>(op)) + " with " + str(xs.size()) + " operands: not takes one, and and or two");
  for (const Tensor t : xs) check_bool(*this, t, to_string(op), name, "operand");
  Shape out = broadcast_all(*this, xs, to_string(op), name);
  return add_node(OpKind::Logical, LogicalParams{op}, std::move(xs), {DType::boolean, std::move(out)}, std::move(name));
}

Tensor Graph::logical_not(Tensor x, std::string name) { return logical(LogicalOp::Not, {x}, std::move(name)); }
Tensor Graph::logical_and(Tensor a, Tensor b, std::string name) {
  return logical(LogicalOp::And, {a, b}, std::move(name));
}
Tensor Graph::logical_or(Tensor a, Tensor b, std::string name) {
  return logical(LogicalOp::Or, {a, b}, std::move(name));
}

Tensor Graph::where(Tensor cond, Tensor x, Tensor y, std::string name) {
  name = node_name(OpKind::Where, std::move(name));
  check_bool(*this, cond, "where", name, "condition");
  const Tensor values[] = {x, y};
  check_same_dtype(*this, values, "where", name);
  const Tensor ts[] = {cond, x, y};
  Shape out = broadcast_all(*this, ts, "where", name);
  return add_node(OpKind::Where, std::monostate{}, {cond, x, y}, {dtype(x), std::move(out)}, std::move(name));
}

// --- backward ops ------------------------------------------------------------------------------

Tensor Graph::activation_backward(Tensor x, Tensor dy, const ActivationBackwardParams& p, std::string name) {
  name = node_name(OpKind::ActivationBackward, std::move(name));
  switch (p.activation) {
    case OpKind::Relu: case OpKind::Clip: case OpKind::Gelu: case OpKind::HardSigmoid: case OpKind::HardSwish: break;
    default:
      fail(ErrorCode::InvalidArgument, "activation_backward", name,
           "activation " + std::string(to_string(p.activation)) + " is none of relu, clip, gelu, hard_sigmoid, hard_swish");
  }
  if (this->shape(x) != this->shape(dy))
    fail(ErrorCode::ShapeMismatch, "activation_backward", name,
         "x " + to_string(this->shape(x)) + " and dy " + to_string(this->shape(dy)) + " must have one shape");
  const Tensor ts[] = {x, dy};
  check_same_dtype(*this, ts, "activation_backward", name);
  return add_node(OpKind::ActivationBackward, p, {x, dy}, desc(x), std::move(name));
}

Tensor Graph::max_pool2d_backward(Tensor x, Tensor dy, const Pool2dParams& p, std::string name) {
  name = node_name(OpKind::MaxPool2dBackward, std::move(name));
  const Shape y = pooled_shape(this->shape(x), OpKind::MaxPool2dBackward, p, name);
  if (this->shape(dy) != y)
    fail(ErrorCode::ShapeMismatch, "max_pool2d_backward", name,
         "dy " + to_string(this->shape(dy)) + " must have the pool's output shape " + to_string(y));
  const Tensor ts[] = {x, dy};
  check_same_dtype(*this, ts, "max_pool2d_backward", name);
  return add_node(OpKind::MaxPool2dBackward, p, {x, dy}, desc(x), std::move(name));
}

namespace {

// The loss's shape for logits of shape `s`: s without the class axis, [1] for a vector.
Shape cross_entropy_rows(const Shape& s) { return s.size() == 1 ? Shape{1} : Shape(s.begin(), s.end() - 1); }

bool is_index(DType t) { return t == DType::i64 || t == DType::i32; }

}  // namespace

Tensor Graph::softmax_cross_entropy(Tensor logits, Tensor labels, std::string name) {
  name = node_name(OpKind::SoftmaxCrossEntropy, std::move(name));
  const Shape& s = this->shape(logits);
  Shape out = cross_entropy_rows(s);
  if (is_index(dtype(labels))) {
    if (this->shape(labels) != out)
      fail(ErrorCode::ShapeMismatch, "softmax_cross_entropy", name,
           "integer labels " + to_string(this->shape(labels)) + " must have the logits' shape " + to_string(s) +
               " without its class axis, " + to_string(out) + ": one class index per row");
    return add_node(OpKind::SoftmaxCrossEntropy, std::monostate{}, {logits, labels}, {dtype(logits), std::move(out)},
                    std::move(name));
  }
  if (this->shape(labels) != s)
    fail(ErrorCode::ShapeMismatch, "softmax_cross_entropy", name,
         "labels " + to_string(this->shape(labels)) + " must have the logits' shape " + to_string(s) +
             " (float labels) or " + to_string(out) + " (i64 or i32 class indices)");
  const Tensor ts[] = {logits, labels};
  check_same_dtype(*this, ts, "softmax_cross_entropy", name);
  return add_node(OpKind::SoftmaxCrossEntropy, std::monostate{}, {logits, labels}, {dtype(logits), std::move(out)},
                  std::move(name));
}

Tensor Graph::softmax_cross_entropy_backward(Tensor logits, Tensor labels, Tensor dy, std::string name) {
  name = node_name(OpKind::SoftmaxCrossEntropyBackward, std::move(name));
  const Shape& s = this->shape(logits);
  const Shape rows = cross_entropy_rows(s);
  if (!is_index(dtype(labels)))
    fail(ErrorCode::DTypeMismatch, "softmax_cross_entropy_backward", name,
         "labels '" + info(labels).name + "' are " + std::string(to_string(dtype(labels))) +
             "; they must be i64 or i32 class indices (float labels' gradient is a composition of forward ops)");
  if (this->shape(labels) != rows || this->shape(dy) != rows)
    fail(ErrorCode::ShapeMismatch, "softmax_cross_entropy_backward", name,
         "labels " + to_string(this->shape(labels)) + " and dy " + to_string(this->shape(dy)) +
             " must have the loss's shape " + to_string(rows) + ", the logits' " + to_string(s) +
             " without its class axis");
  const Tensor ts[] = {logits, dy};
  check_same_dtype(*this, ts, "softmax_cross_entropy_backward", name);
  return add_node(OpKind::SoftmaxCrossEntropyBackward, std::monostate{}, {logits, labels, dy}, desc(logits),
                  std::move(name));
}

Tensor Graph::attention(Tensor q, Tensor k, Tensor v, const AttentionParams& p, Tensor mask, std::string name) {
  name = node_name(OpKind::Attention, std::move(name));
  const Shape &sq = this->shape(q), &sk = this->shape(k), &sv = this->shape(v);
  std::vector<Tensor> inputs{q, k, v};
  if (mask) inputs.push_back(mask);
  check_same_dtype(*this, inputs, "attention", name);
  const auto shapes = [&] { return "q " + to_string(sq) + ", k " + to_string(sk) + ", v " + to_string(sv); };
  if (sq.size() != 4 || sk.size() != 4 || sv.size() != 4)
    fail(ErrorCode::ShapeMismatch, "attention", name, shapes() + " must each be [batch, heads, seq, head_dim]");
  if (sk[0] != sq[0] || sk[1] != sq[1] || sv[0] != sq[0] || sv[1] != sq[1] || sk[3] != sq[3] || sv[2] != sk[2])
    fail(ErrorCode::ShapeMismatch, "attention", name,
         shapes() + ": batch and heads must agree, k's head_dim must be q's, and v must have k's sequence");
  const Shape out{sq[0], sq[1], sq[2], sv[3]};
  if (mask) {
    Shape joined;
    const Shape scores{sq[0], sq[1], sq[2], sk[2]};
    if (this->shape(mask).size() > 4 || !broadcast_shapes(scores, this->shape(mask), joined) || joined != scores)
      fail(ErrorCode::ShapeMismatch, "attention", name,
           "mask " + to_string(this->shape(mask)) + " does not broadcast to the scores " + to_string(scores));
  }
  if (!std::isfinite(p.scale) || p.scale < 0.0f)
    fail(ErrorCode::InvalidArgument, "attention", name,
         "scale " + std::to_string(p.scale) + " must be finite and > 0 (0 asks for 1 / sqrt(head_dim))");
  AttentionParams resolved = p;
  if (resolved.scale == 0.0f) resolved.scale = sq[3] > 0 ? 1.0f / std::sqrt(static_cast<float>(sq[3])) : 1.0f;
  check_shape(out, dtype(q), "attention", name, "output");
  return add_node(OpKind::Attention, resolved, std::move(inputs), {dtype(q), out}, std::move(name));
}

Tensor Graph::dropout(Tensor x, Tensor step, const DropoutParams& p, std::string name) {
  name = node_name(OpKind::Dropout, std::move(name));
  if (!(p.ratio >= 0.0f && p.ratio < 1.0f))
    fail(ErrorCode::InvalidArgument, "dropout", name, "ratio " + std::to_string(p.ratio) + " is outside [0, 1)");
  if (dtype(step) != DType::f32 || desc(step).numel() != 1)
    fail(ErrorCode::InvalidArgument, "dropout", name,
         "step '" + info(step).name + "' must be one f32 element, not " + std::string(to_string(dtype(step))) + " " +
             to_string(this->shape(step)));
  const auto rank = static_cast<std::int32_t>(this->shape(x).size());
  if (p.mask_dims < -1 || p.mask_dims > rank)
    fail(ErrorCode::InvalidArgument, "dropout", name,
         "mask_dims " + std::to_string(p.mask_dims) + " is outside -1 (every dim) .. " + std::to_string(rank) +
             " (the rank of x, " + to_string(this->shape(x)) + ")");
  if (p.batch_offset < 0 || p.batch_offset > detail::max_batch_offset)
    fail(ErrorCode::InvalidArgument, "dropout", name,
         "batch_offset " + std::to_string(p.batch_offset) + " must be in 0 .. 2^31 - 1 (the index along dim 0, in "
         "the batch x is a shard of, of x's first sample)");
  return add_node(OpKind::Dropout, p, {x, step}, desc(x), std::move(name));
}

Tensor Graph::depthwise_filter_gradient(Tensor x, Tensor dy, const Conv2dParams& p, std::string name) {
  name = node_name(OpKind::DepthwiseFilterGradient, std::move(name));
  const char* op = "depthwise_filter_gradient";
  const Shape &sx = this->shape(x), &sd = this->shape(dy);
  check_layout(p.layout, op, name);
  check_window(op, name, {1, 1}, p.stride, p.pad, p.dilation);
  const std::int64_t channel = p.layout == Layout::NHWC ? 3 : 1;
  if (sx.size() != 4 || sd.size() != 4 || sx[0] != sd[0] || sx[channel] != sd[channel])
    fail(ErrorCode::ShapeMismatch, op, name,
         "x " + to_string(sx) + " and dy " + to_string(sd) + " must be 4-D " + str(p.layout) +
             " with one batch and one channel count");
  if (p.groups != sx[channel] || p.residual || p.activation != Activation::None)
    fail(ErrorCode::InvalidArgument, op, name,
         "groups " + str(p.groups) + " must be the channel count " + str(sx[channel]) +
             ", with no residual or activation");
  const auto d = detail::depthwise_gradient_dims(sx, sd, p);
  if (d.r < 1 || d.s < 1)
    fail(ErrorCode::ShapeMismatch, op, name,
         "dy " + to_string(sd) + " is larger than any conv2d of x " + to_string(sx) + " with these strides and pads");
  const Tensor ts[] = {x, dy};
  check_same_dtype(*this, ts, op, name);
  const Shape out{d.c, 1, d.r, d.s};
  check_shape(out, dtype(x), op, name, "output");
  return add_node(OpKind::DepthwiseFilterGradient, p, {x, dy}, {dtype(x), out}, std::move(name));
}

}  // namespace porta
