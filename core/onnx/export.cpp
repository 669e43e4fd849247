// porta::Graph -> ONNX (opset 13): one node per porta node, plus the nodes ONNX spells separately
// (a conv's residual add and fused activation, SiLU as x * sigmoid(x), MatMul's transposes). Values
// keep the graph's tensor names; a graph output under another name gets an Identity.
#include <cmath>
#include <fstream>
#include <limits>
#include <set>

#include "core/onnx/writer.hpp"
#include "porta/error.hpp"
#include "porta/onnx.hpp"

namespace porta::onnx {
namespace {

using namespace writer;

[[noreturn]] void unsupported(const Node& n, const std::string& what) {
  throw Error(ErrorCode::Unsupported, "ONNX export: node '" + n.name + "' (" + std::string(to_string(n.op)) + "): " +
                                          what + " has no ONNX opset 13 form that porta writes");
}

std::int32_t elem_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return FLOAT;
    case DType::f16: return FLOAT16;
    case DType::bf16: return BFLOAT16;
    case DType::i64: return INT64;
    case DType::i32: return INT32;
    case DType::boolean: return BOOL;
  }
  throw Error(ErrorCode::Unsupported, "ONNX export: dtype " + std::string(to_string(dtype)));
}

std::vector<std::int64_t> pads(const std::array<std::int64_t, 4>& p) { return {p[0], p[1], p[2], p[3]}; }
std::vector<std::int64_t> pair(const std::array<std::int64_t, 2>& p) { return {p[0], p[1]}; }

class Exporter {
 public:
  explicit Exporter(const Graph& g) : g_(g) {
    for (const TensorInfo& t : g.tensors()) used_.insert(t.name);
  }

  std::vector<std::byte> bytes() {
    for (const Tensor t : g_.inputs()) model_.inputs.push_back(value_info(name(t), g_.shape(t), elem(t)));
    for (const TensorInfo& t : g_.tensors())  // a variable as its initial value; ONNX keeps no state across runs
      if (t.role == Role::Constant || t.role == Role::Variable)
        model_.initializers.push_back(raw_tensor(t.name, t.desc.shape, elem_type(t.desc.dtype), t.data->data(),
                                                 t.data->size()));
    for (const Node& n : g_.nodes()) node(n);
    for (const auto& [output, t] : g_.outputs()) {
      if (output != name(t)) {
        if (used_.count(output))
          throw Error(ErrorCode::Unsupported, "ONNX export: output '" + output + "' is also the name of another tensor");
        emit("Identity", {name(t)}, output, output);
      }
      model_.outputs.push_back(value_info(output, g_.shape(t), elem(t)));
    }
    return model_.bytes();
  }

 private:
  const std::string& name(Tensor t) const { return g_.info(t).name; }
  std::int32_t elem(Tensor t) const { return elem_type(g_.dtype(t)); }

  // A name no tensor or earlier in-between value has, for the values ONNX needs in between.
  std::string fresh(const std::string& base) {
    std::string candidate = base;
    for (int i = 1; used_.count(candidate); ++i) candidate = base + "_" + std::to_string(i);
    used_.insert(candidate);
    return candidate;
  }
  void emit(const std::string& op, const std::vector<std::string>& inputs, const std::string& output,
            const std::string& node_name, const std::vector<Proto>& attrs = {}) {
    model_.nodes.push_back(writer::node(op, inputs, {output}, node_name, attrs));
  }
  std::string scalar(const std::string& base, float v) {
    const std::string n = fresh(base);
    model_.initializers.push_back(raw_tensor(n, {}, FLOAT, &v, sizeof v));
    return n;
  }
  std::string ints(const std::string& base, const std::vector<std::int64_t>& values) {
    const std::string n = fresh(base);
    model_.initializers.push_back(int64_tensor(n, values));
    return n;
  }

  // `x` through `act` into `out`, by nodes named `node_name` (the last) and after it.
  void activation(const Node& n, const std::string& x, Activation act, const std::string& out,
                  const std::string& node_name) {
    switch (act) {
      case Activation::None: emit("Identity", {x}, out, node_name); return;
      case Activation::Relu: emit("Relu", {x}, out, node_name); return;
      case Activation::Sigmoid: emit("Sigmoid", {x}, out, node_name); return;
      case Activation::Tanh: emit("Tanh", {x}, out, node_name); return;
      case Activation::Relu6: clip(x, 0.0f, 6.0f, out, node_name); return;
      case Activation::Silu: {
        const std::string gate = fresh(node_name + ".sigmoid");
        emit("Sigmoid", {x}, gate, gate);
        emit("Mul", {x, gate}, out, node_name);
        return;
      }
      case Activation::Gelu: return gelu(x, false, g_.dtype(n.output), out, node_name);
    }
  }
  // GELU as opset 13 spells it (opset 20's Gelu is its function): 0.5 x (1 + erf(x / sqrt 2)), or with
  // the tanh approximation 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), in x's dtype.
  void gelu(const std::string& x, bool tanh, DType dtype, const std::string& out, const std::string& node_name) {
    const auto constant = [&](const std::string& what, float v) { return typed_scalar(node_name + what, v, dtype); };
    const auto step = [&](const std::string& op, const std::vector<std::string>& inputs, const std::string& what) {
      const std::string value = fresh(node_name + "." + what);
      emit(op, inputs, value, value);
      return value;
    };
    std::string gate;
    if (tanh) {
      const std::string cube = step("Mul", {step("Mul", {x, x}, "square"), x}, "cube");
      const std::string inner = step("Add", {x, step("Mul", {cube, constant(".c", 0.044715f)}, "cubic")}, "inner");
      const std::string k = constant(".k", std::sqrt(2.0f / 3.14159265358979f));
      gate = step("Tanh", {step("Mul", {inner, k}, "scaled")}, "tanh");
    } else {
      gate = step("Erf", {step("Div", {x, constant(".sqrt2", std::sqrt(2.0f))}, "scaled")}, "erf");
    }
    const std::string half = step("Mul", {x, constant(".half", 0.5f)}, "half");
    emit("Mul", {half, step("Add", {gate, constant(".one", 1.0f)}, "one_plus")}, out, node_name);
  }
  void clip(const std::string& x, float lo, float hi, const std::string& out, const std::string& node_name) {
    emit("Clip", {x, scalar(node_name + ".min", lo), scalar(node_name + ".max", hi)}, out, node_name);
  }
  // What a fused epilogue writes: `y` itself, or an intermediate for the ops after it.
  std::string before_epilogue(const std::string& y, bool more) { return more ? fresh(y + ".pre") : y; }

  void conv(const Node& n, const std::vector<std::string>& in, const std::string& y) {
    const auto& p = std::get<Conv2dParams>(n.params);
    if (p.layout != Layout::NCHW) unsupported(n, "an NHWC conv");
    const Shape& w = g_.shape(n.inputs[1]);
    std::vector<std::string> operands(in.begin(), in.end() - (p.residual ? 1 : 0));
    const bool act = p.activation != Activation::None;
    std::string out = before_epilogue(y, p.residual || act);
    emit("Conv", operands, out, n.name,
         {attr_ints("kernel_shape", {w[2], w[3]}), attr_ints("strides", pair(p.stride)), attr_ints("pads", pads(p.pad)),
          attr_ints("dilations", pair(p.dilation)), attr_int("group", p.groups)});
    if (p.residual) {
      const std::string sum = before_epilogue(y, act);
      emit("Add", {out, in.back()}, sum, fresh(n.name + ".residual"));
      out = sum;
    }
    if (act) activation(n, out, p.activation, y, fresh(n.name + ".act"));
  }
  void gemm(const Node& n, const std::vector<std::string>& in, const std::string& y) {
    const auto& p = std::get<GemmParams>(n.params);
    const bool act = p.activation != Activation::None;
    const std::string out = before_epilogue(y, act);
    emit("Gemm", in, out, n.name,
         {attr_int("transA", p.trans_a), attr_int("transB", p.trans_b), attr_float("alpha", p.alpha),
          attr_float("beta", p.beta)});
    if (act) activation(n, out, p.activation, y, fresh(n.name + ".act"));
  }
  void matmul(const Node& n, std::vector<std::string> in, const std::string& y) {
    const auto& p = std::get<MatMulParams>(n.params);
    for (std::size_t i = 0; i < 2; ++i) {
      const auto rank = static_cast<std::int64_t>(g_.shape(n.inputs[i]).size());
      if (!(i == 0 ? p.trans_a : p.trans_b) || rank < 2) continue;
      std::vector<std::int64_t> perm(static_cast<std::size_t>(rank));
      for (std::int64_t d = 0; d < rank; ++d) perm[static_cast<std::size_t>(d)] = d;
      std::swap(perm[perm.size() - 2], perm.back());
      const std::string t = fresh(n.name + (i == 0 ? ".a_t" : ".b_t"));
      emit("Transpose", {in[i]}, t, t, {attr_ints("perm", perm)});
      in[i] = t;
    }
    emit("MatMul", in, y, n.name);
  }
  void pool(const Node& n, const std::vector<std::string>& in, const std::string& y) {
    const auto& p = std::get<Pool2dParams>(n.params);
    if (p.layout != Layout::NCHW) unsupported(n, "an NHWC pool");
    std::vector<Proto> attrs{attr_ints("kernel_shape", pair(p.kernel)), attr_ints("strides", pair(p.stride)),
                             attr_ints("pads", pads(p.pad)), attr_int("ceil_mode", p.ceil_mode)};
    if (n.op == OpKind::MaxPool2d) {
      attrs.push_back(attr_ints("dilations", pair(p.dilation)));
      emit("MaxPool", in, y, n.name, attrs);
      return;
    }
    if (p.dilation != std::array<std::int64_t, 2>{1, 1}) unsupported(n, "a dilated average pool");
    attrs.push_back(attr_int("count_include_pad", p.count_include_pad));
    emit("AveragePool", in, y, n.name, attrs);
  }

  // A one-element initializer of `dtype`, for arithmetic beside tensors of that dtype.
  std::string typed_scalar(const std::string& base, float v, DType dtype) {
    const std::string n = fresh(base);
    std::byte bytes[8];  // the widest dtype's
    store_from_f32(bytes, 0, dtype, v);
    model_.initializers.push_back(raw_tensor(n, {}, elem_type(dtype), bytes, size_of(dtype)));
    return n;
  }

  // LayerNormalization (opset 17) and RMSNormalization (23) spelt out in opset 13, as their ONNX
  // function bodies are: in f32 (their stash_type), ReduceMean over the normalised axes and the spread
  // about it; then, back in the tensors' dtype, the scaling.
  void norm(const Node& n, const std::vector<std::string>& in, const std::string& y) {
    const auto& p = std::get<NormParams>(n.params);
    std::vector<std::int64_t> axes;
    for (auto a = p.axis; a < static_cast<std::int64_t>(g_.shape(n.inputs[0]).size()); ++a) axes.push_back(a);
    const auto step = [&](const std::string& op, const std::vector<std::string>& inputs, const std::string& what,
                          const std::vector<Proto>& attrs = {}) {
      const std::string out = fresh(n.name + "." + what);
      emit(op, inputs, out, out, attrs);
      return out;
    };
    const DType dtype = g_.dtype(n.inputs[0]);
    const bool cast = dtype != DType::f32;
    const std::string x = cast ? step("Cast", {in[0]}, "f32", {attr_int("to", FLOAT)}) : in[0];
    std::string centred = x;
    if (n.op == OpKind::LayerNorm)
      centred = step("Sub", {x, step("ReduceMean", {x}, "mean", {attr_ints("axes", axes)})}, "centred");
    const std::string variance =
        step("ReduceMean", {step("Mul", {centred, centred}, "square")}, "variance", {attr_ints("axes", axes)});
    const std::string epsilon = typed_scalar(n.name + ".epsilon", p.epsilon, DType::f32);
    const std::string deviation = step("Sqrt", {step("Add", {variance, epsilon}, "shifted")}, "deviation");
    std::string normalised = step("Div", {centred, deviation}, "normalised");
    if (cast) normalised = step("Cast", {normalised}, "cast", {attr_int("to", elem_type(dtype))});
    if (in.size() < 3) return emit("Mul", {normalised, in[1]}, y, n.name);
    emit("Add", {step("Mul", {normalised, in[1]}, "scaled"), in[2]}, y, n.name);
  }

  // Opset 13: ReduceSum takes its axes as an input, the others as an attribute.
  void reduce(const Node& n, const std::string& x, const std::string& y) {
    const auto& p = std::get<ReduceParams>(n.params);
    const Proto keepdims = attr_int("keepdims", p.keepdims ? 1 : 0);
    switch (p.op) {
      case Reduction::Sum: return emit("ReduceSum", {x, ints(n.name + ".axes", p.axes)}, y, n.name, {keepdims});
      case Reduction::Mean: return emit("ReduceMean", {x}, y, n.name, {attr_ints("axes", p.axes), keepdims});
      case Reduction::Max: return emit("ReduceMax", {x}, y, n.name, {attr_ints("axes", p.axes), keepdims});
      case Reduction::Min: return emit("ReduceMin", {x}, y, n.name, {attr_ints("axes", p.axes), keepdims});
    }
  }

  static const char* compare_op(Comparison c) {
    switch (c) {
      case Comparison::Equal: return "Equal";
      case Comparison::Less: return "Less";
      case Comparison::LessOrEqual: return "LessOrEqual";
      case Comparison::Greater: return "Greater";
      case Comparison::GreaterOrEqual: return "GreaterOrEqual";
    }
    return "?";
  }
  static const char* logical_op(LogicalOp op) {
    return op == LogicalOp::Not ? "Not" : op == LogicalOp::And ? "And" : "Or";
  }

  // Attention as its unfused graph: MatMul(q, Transpose(k)) -> Mul(scale) -> Add(mask) -> Softmax -> MatMul(., v),
  // the pattern the importer folds back into one node; causal as a constant mask of -inf above the
  // diagonal, added to the node's own mask if it has one.
  void attention(const Node& n, const std::vector<std::string>& in, const std::string& y) {
    const auto& p = std::get<AttentionParams>(n.params);
    const DType dtype = g_.dtype(n.output);
    const auto step = [&](const std::string& op, const std::vector<std::string>& inputs, const std::string& what,
                          const std::vector<Proto>& attrs = {}) {
      const std::string out = fresh(n.name + "." + what);
      emit(op, inputs, out, out, attrs);
      return out;
    };
    const std::string kt = step("Transpose", {in[1]}, "kt", {attr_ints("perm", {0, 1, 3, 2})});
    const std::string scale = typed_scalar(n.name + ".scale", p.scale, dtype);
    std::string scores = step("Mul", {step("MatMul", {in[0], kt}, "qk"), scale}, "scaled");
    std::string mask = in.size() > 3 ? in[3] : "";
    if (p.causal) {  // one mask, so that the chain keeps the single Add the importer reads
      const std::int64_t sq = g_.shape(n.inputs[0])[2], sk = g_.shape(n.inputs[1])[2];
      std::vector<std::byte> bytes(static_cast<std::size_t>(sq * sk) * size_of(dtype));
      for (std::int64_t i = 0; i < sq; ++i)
        for (std::int64_t j = 0; j < sk; ++j)
          store_from_f32(bytes.data(), static_cast<std::size_t>(i * sk + j), dtype,
                         j > i ? -std::numeric_limits<float>::infinity() : 0.0f);
      const std::string causal = fresh(n.name + ".causal");
      model_.initializers.push_back(raw_tensor(causal, {sq, sk}, elem_type(dtype), bytes.data(), bytes.size()));
      mask = mask.empty() ? causal : step("Add", {mask, causal}, "mask");
    }
    if (!mask.empty()) scores = step("Add", {scores, mask}, "masked");
    emit("MatMul", {step("Softmax", {scores}, "weights", {attr_int("axis", -1)}), in[2]}, y, n.name);
  }

  // Pad's constant is a scalar of x's own element type.
  void pad(const Node& n, const std::string& x, const std::string& y) {
    const auto& p = std::get<PadParams>(n.params);
    const DType dtype = g_.dtype(n.output);
    const std::uint64_t bits = storage_bits(p.value, dtype);  // little-endian: the low bytes
    const std::string value = fresh(n.name + ".value");
    model_.initializers.push_back(raw_tensor(value, {}, elem_type(dtype), &bits, size_of(dtype)));
    emit("Pad", {x, ints(n.name + ".pads", p.pads), value}, y, n.name,
         {attr_string("mode", std::string(to_string(p.mode)))});
  }

  void node(const Node& n) {
    std::vector<std::string> in;
    for (const Tensor t : n.inputs) in.push_back(name(t));
    const std::string& y = name(n.output);
    static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
    switch (n.op) {
      case OpKind::Conv2d: return conv(n, in, y);
      case OpKind::Gemm: return gemm(n, in, y);
      case OpKind::MatMul: return matmul(n, in, y);
      case OpKind::MaxPool2d:
      case OpKind::AvgPool2d: return pool(n, in, y);
      case OpKind::Add: return emit("Add", in, y, n.name);
      case OpKind::Sub: return emit("Sub", in, y, n.name);
      case OpKind::Mul: return emit("Mul", in, y, n.name);
      case OpKind::Div: return emit("Div", in, y, n.name);
      case OpKind::Relu: return emit("Relu", in, y, n.name);
      case OpKind::Sigmoid: return emit("Sigmoid", in, y, n.name);
      case OpKind::Tanh: return emit("Tanh", in, y, n.name);
      case OpKind::Silu: return activation(n, in[0], Activation::Silu, y, n.name);
      case OpKind::Clip: {
        const auto& p = std::get<ClipParams>(n.params);
        return clip(in[0], p.min, p.max, y, n.name);
      }
      case OpKind::BatchNorm:
        return emit("BatchNormalization", in, y, n.name,
                    {attr_float("epsilon", std::get<BatchNormParams>(n.params).epsilon)});
      case OpKind::GlobalAvgPool:
        if (std::get<GlobalPoolParams>(n.params).layout != Layout::NCHW) unsupported(n, "an NHWC pool");
        return emit("GlobalAveragePool", in, y, n.name);
      case OpKind::Softmax:
        return emit("Softmax", in, y, n.name, {attr_int("axis", std::get<SoftmaxParams>(n.params).axis)});
      case OpKind::Reshape:
        return emit("Reshape", {in[0], ints(n.name + ".shape", std::get<ReshapeParams>(n.params).shape)}, y, n.name);
      case OpKind::Transpose:
        return emit("Transpose", in, y, n.name, {attr_ints("perm", std::get<TransposeParams>(n.params).perm)});
      case OpKind::Concat:
        return emit("Concat", in, y, n.name, {attr_int("axis", std::get<ConcatParams>(n.params).axis)});
      case OpKind::Cast:
        return emit("Cast", in, y, n.name, {attr_int("to", elem_type(std::get<CastParams>(n.params).to))});
      case OpKind::Slice: {
        const auto& p = std::get<SliceParams>(n.params);
        return emit("Slice", {in[0], ints(n.name + ".starts", p.starts), ints(n.name + ".ends", p.ends),
                              ints(n.name + ".axes", p.axes), ints(n.name + ".steps", p.steps)}, y, n.name);
      }
      case OpKind::Pad: return pad(n, in[0], y);
      case OpKind::Expand:
        return emit("Expand", {in[0], ints(n.name + ".shape", std::get<ExpandParams>(n.params).shape)}, y, n.name);
      case OpKind::Gelu:
        return gelu(in[0], std::get<GeluParams>(n.params).tanh_approximation, g_.dtype(n.output), y, n.name);
      case OpKind::Erf: return emit("Erf", in, y, n.name);
      case OpKind::Sqrt: return emit("Sqrt", in, y, n.name);
      case OpKind::Reciprocal: return emit("Reciprocal", in, y, n.name);
      case OpKind::HardSigmoid: {
        const auto& p = std::get<HardSigmoidParams>(n.params);
        return emit("HardSigmoid", in, y, n.name, {attr_float("alpha", p.alpha), attr_float("beta", p.beta)});
      }
      case OpKind::HardSwish: {  // opset 14's HardSwish, spelt in opset 13
        const std::string gate = fresh(n.name + ".hard_sigmoid");
        emit("HardSigmoid", in, gate, gate, {attr_float("alpha", 1.0f / 6.0f), attr_float("beta", 0.5f)});
        return emit("Mul", {in[0], gate}, y, n.name);
      }
      case OpKind::Pow: return emit("Pow", in, y, n.name);
      case OpKind::Reduce: return reduce(n, in[0], y);
      case OpKind::LayerNorm:
      case OpKind::RmsNorm: return norm(n, in, y);
      case OpKind::Gather:
        return emit("Gather", in, y, n.name, {attr_int("axis", std::get<GatherParams>(n.params).axis)});
      case OpKind::Compare: return emit(compare_op(std::get<CompareParams>(n.params).op), in, y, n.name);
      case OpKind::Logical: return emit(logical_op(std::get<LogicalParams>(n.params).op), in, y, n.name);
      case OpKind::Where: return emit("Where", in, y, n.name);
      case OpKind::ActivationBackward:
      case OpKind::MaxPool2dBackward:
      case OpKind::SoftmaxCrossEntropy:
      case OpKind::DepthwiseFilterGradient: unsupported(n, "a backward or loss op");
      case OpKind::SoftmaxCrossEntropyBackward: unsupported(n, "a backward or loss op");
      case OpKind::Attention: return attention(n, in, y);
      case OpKind::Dropout:  // ONNX Dropout draws its mask from the runtime's own generator, per element
        unsupported(n, std::get<DropoutParams>(n.params).mask_dims >= 0
                           ? "a seeded dropout over leading dims (stochastic depth; ONNX has none)"
                           : "a seeded dropout");
    }
    unsupported(n, "the op");
  }

  const Graph& g_;
  std::set<std::string> used_;
  Model model_;
};

}  // namespace

std::vector<std::byte> save_bytes(const Graph& graph) { return Exporter(graph).bytes(); }

void save(const Graph& graph, const std::filesystem::path& path) {
  const std::vector<std::byte> bytes = save_bytes(graph);
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) throw Error(ErrorCode::IoError, "ONNX export: cannot write " + path.string());
}

}  // namespace porta::onnx
