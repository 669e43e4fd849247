// ONNX graph -> porta::Graph: one handler per op type, each mapping attributes onto the builder's
// params (which then check shapes and values as for any caller). Ops whose inputs are all known at
// load time (shape arithmetic) are evaluated instead (fold.cpp).
#include <algorithm>
#include <deque>
#include <fstream>
#include <limits>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "core/onnx/attrs.hpp"
#include "core/onnx/attention_pattern.hpp"
#include "core/onnx/einsum.hpp"
#include "core/onnx/external_data.hpp"
#include "core/onnx/fold.hpp"
#include "core/onnx/literal.hpp"
#include "core/onnx/model.hpp"
#include "porta/error.hpp"
#include "porta/onnx.hpp"

namespace porta::onnx {
namespace {

// Default-domain opsets whose semantics for the supported ops are handled below and tested (18 moved
// the reductions' axes to inputs). 19 to 23 gave those ops new element types, which the dtype check
// refuses, and Pad its wrap mode, refused; they added Gelu (20) and RMSNormalization (23).
constexpr std::int64_t min_opset = 7, max_opset = 23;

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// The porta dtype of an ONNX element type: float, float16, bfloat16, int64, int32 or bool.
DType storage_dtype(std::int64_t elem_type, const std::string& what, const std::string& of) {
  switch (static_cast<ElemType>(elem_type)) {
    case ElemType::Float: return DType::f32;
    case ElemType::Float16: return DType::f16;
    case ElemType::BFloat16: return DType::bf16;
    case ElemType::Int64: return DType::i64;
    case ElemType::Int32: return DType::i32;
    case ElemType::Bool: return DType::boolean;
    default: break;
  }
  unsupported(what + elem_type_name(static_cast<std::int32_t>(elem_type)) +
              "; porta takes float, float16, bfloat16, int64, int32 or bool" + of);
}

struct Value {
  Tensor tensor;                           // set once the value is in the graph
  std::shared_ptr<const Literal> literal;  // set for values known at load time
};

class Importer {
 public:
  // `folder`: where the model's external data lies; null for a model given as bytes.
  Importer(const GraphProto& graph, std::int64_t opset, const LoadOptions& options,
           const std::filesystem::path* folder)
      : graph_(graph), opset_(opset), options_(options), folder_(folder) {}

  Graph run() {
    check_supported();
    for (const auto& init : graph_.initializers) {
      const std::string what = "initializer '" + init.name + "'";
      auto lit = std::make_shared<Literal>(decode_literal(
          init.external && folder_ ? read_external_data(init, *folder_, external_bytes_, what) : init, what));
      if (init.name.empty()) invalid("an initializer at byte " + std::to_string(init.offset) + " has no name");
      if (!values_.emplace(init.name, Value{{}, std::move(lit)}).second)
        invalid("initializer '" + init.name + "' is defined twice");
    }
    add_inputs();
    for (std::size_t i = 0; i < graph_.nodes.size(); ++i) import_node(graph_.nodes[i], i);
    add_outputs();
    return detail::fuse_attention(std::move(g_));
  }

 private:
  using Handler = void (Importer::*)(const NodeProto&, const Attrs&);
  static const std::unordered_map<std::string_view, Handler>& handlers();

  // --- names ------------------------------------------------------------------------------------
  std::string unique(std::string base) {
    if (base.empty()) base = "onnx";
    std::string name = base;
    for (int k = 1; !names_.insert(name).second; ++k) name = base + "#" + std::to_string(k);
    return name;
  }
  std::string node_label(const NodeProto& n) const {
    if (!n.name.empty()) return "'" + n.name + "' (" + n.op_type + ")";
    return "#" + std::to_string(index_) + " (" + n.op_type + (n.outputs.empty() ? "" : " -> '" + n.outputs[0] + "'") +
           ")";
  }
  std::string base_name(const NodeProto& n) const {
    if (!n.name.empty()) return n.name;
    if (!n.outputs.empty() && !n.outputs[0].empty()) return n.outputs[0];
    return n.op_type + "_" + std::to_string(index_);
  }

  // --- values -----------------------------------------------------------------------------------
  const Value* find(const NodeProto& n, std::size_t i) const {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return nullptr;
    const auto it = values_.find(n.inputs[i]);
    if (it == values_.end())
      invalid("input '" + n.inputs[i] + "' is not a graph input, an initializer or an earlier node's output");
    return &it->second;
  }
  Tensor optional_tensor(const NodeProto& n, std::size_t i) { return find(n, i) ? materialize(n.inputs[i]) : Tensor{}; }
  // The value as a graph tensor: a literal becomes a constant the first time an op reads it as data.
  Tensor materialize(const std::string& name) {
    Value& v = values_.at(name);
    if (v.tensor) return v.tensor;
    const Literal& lit = *v.literal;
    Shape shape = lit.dims.empty() ? Shape{1} : lit.dims;  // porta has no rank 0: a scalar is [1]
    if (lit.is_float) {
      v.tensor = g_.constant_bytes(unique(name), std::move(shape), lit.dtype, lit.bytes);
      return v.tensor;
    }
    const DType dtype = is_float(lit.dtype) ? DType::i64 : lit.dtype;  // an integer value folding made
    std::vector<std::byte> bytes(lit.ints.size() * size_of(dtype));
    for (std::size_t i = 0; i < lit.ints.size(); ++i) store_from_i64(bytes.data(), i, dtype, lit.ints[i]);
    v.tensor = g_.constant_bytes(unique(name), std::move(shape), dtype, bytes);
    return v.tensor;
  }
  Tensor tensor(const NodeProto& n, std::size_t i) {
    const Tensor t = optional_tensor(n, i);
    if (!t) invalid("input " + std::to_string(i) + " is required");
    return t;
  }
  const Literal* optional_literal(const NodeProto& n, std::size_t i, std::string_view what) const {
    const Value* v = find(n, i);
    if (v && !v->literal)
      unsupported(std::string(what) + " '" + n.inputs[i] + "' depends on run-time data; it must be known at " +
                  "load time (an initializer, a Constant, or shape arithmetic porta folds)");
    return v ? v->literal.get() : nullptr;
  }
  float scalar(const NodeProto& n, std::size_t i, std::string_view what, float fallback) const {
    const Literal* lit = optional_literal(n, i, what);
    if (!lit) return fallback;
    if (lit->numel() != 1)
      invalid(std::string(what) + " '" + n.inputs[i] + "' must hold one value, it has dims " + to_string(lit->dims));
    return lit->floats()[0];
  }
  void define(const NodeProto& n, Value v) {
    if (n.outputs.empty() || n.outputs[0].empty()) invalid("the node has no output");
    if (!values_.emplace(n.outputs[0], std::move(v)).second)
      invalid("output '" + n.outputs[0] + "' is already defined elsewhere in the graph");
  }
  void define(const NodeProto& n, Tensor t) { define(n, Value{t, nullptr}); }
  // Extra outputs (BatchNormalization's running stats, MaxPool's indices, Dropout's mask).
  static void no_extra_outputs(const NodeProto& n) {
    for (std::size_t i = 1; i < n.outputs.size(); ++i)
      if (!n.outputs[i].empty())
        unsupported("output " + std::to_string(i) + " ('" + n.outputs[i] +
                    "') is not supported; only the first output is");
  }

  // --- graph boundary ---------------------------------------------------------------------------
  void check_supported() const {
    std::string list;
    std::size_t count = 0;
    for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
      const NodeProto& n = graph_.nodes[i];
      const bool known = is_default_domain(n.domain) && (handlers().contains(n.op_type) || foldable(n.op_type));
      if (known) continue;
      // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "#" + std::to_string(i) here.
      if (count++) list += ", ";
      if (n.name.empty()) list.append("#").append(std::to_string(i));
      else list.append("'").append(n.name).append("'");
      list.append(" (").append(is_default_domain(n.domain) ? std::string() : n.domain + ":");
      list.append(n.op_type).append(")");
    }
    if (count)
      unsupported(std::to_string(count) + " node" + (count > 1 ? "s use ops" : " uses an op") +
                  " porta does not import: " + list);
    if (graph_.has_sparse_initializers) unsupported("sparse initializers are not supported");
  }

  void add_inputs() {
    if (options_.batch < 1) invalid("LoadOptions::batch " + std::to_string(options_.batch) + " must be >= 1");
    for (const auto& entry : options_.input_shapes) {
      const std::string& name = entry.first;  // a plain reference: clang 15 cannot capture a structured binding
      const bool known = std::any_of(graph_.inputs.begin(), graph_.inputs.end(),
                                     [&](const ValueInfo& v) { return v.name == name && !values_.contains(v.name); });
      if (!known) invalid("a shape is given for input '" + name + "', which the model does not have");
    }
    for (const ValueInfo& in : graph_.inputs) {
      if (values_.contains(in.name)) continue;  // an initializer listed as an input (IR < 4): a constant
      const std::string what = "input '" + in.name + "'";
      const DType dtype = storage_dtype(in.elem_type, what + " has element type ", " inputs");
      Shape shape;
      if (const auto it = options_.input_shapes.find(in.name); it != options_.input_shapes.end()) {
        shape = it->second;
      } else {
        if (!in.has_shape) invalid(what + " declares no shape; give one in LoadOptions::input_shapes");
        for (std::size_t d = 0; d < in.dims.size(); ++d) {
          const auto& dim = in.dims[d];
          if (dim.value && *dim.value > 0) {
            shape.push_back(*dim.value);
          } else if (d == 0 && (!dim.value || *dim.value == 0)) {
            shape.push_back(options_.batch);  // symbolic or unknown batch
          } else {
            invalid(what + " dimension " + std::to_string(d) + " is " +
                    (dim.param.empty() ? (dim.value ? std::to_string(*dim.value) : std::string("unknown"))
                                       : "'" + dim.param + "'") +
                    "; give the input's shape in LoadOptions::input_shapes");
          }
        }
        if (shape.empty()) shape.push_back(1);
      }
      names_.insert(in.name);
      if (!values_.emplace(in.name, Value{g_.input(in.name, shape, dtype), nullptr}).second)
        invalid(what + " is declared twice");
    }
  }

  void add_outputs() {
    if (graph_.outputs.empty()) invalid("the graph has no outputs");
    for (const ValueInfo& out : graph_.outputs) {
      if (!values_.contains(out.name))
        invalid("graph output '" + out.name + "' is not produced by any node, input or initializer");
      g_.output(out.name, materialize(out.name));
    }
  }

  void import_node(const NodeProto& n, std::size_t index) {
    index_ = index;
    try {
      if (!fold_known(n)) (this->*handler(n))(n, Attrs(n));
    } catch (const Error& e) {
      std::string message = e.what();
      if (message.starts_with("ONNX: ")) message.erase(0, 6);
      throw Error(e.code(), "ONNX: node " + node_label(n) + " at byte " + std::to_string(n.offset) + ": " + message);
    }
  }

  // A foldable op whose inputs are all known at load time becomes a known value (fold.cpp).
  bool fold_known(const NodeProto& n) {
    if (!foldable(n.op_type)) return false;
    std::vector<const Literal*> inputs;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      const Value* v = find(n, i);
      if (v && !v->literal) return false;
      inputs.push_back(v ? v->literal.get() : nullptr);
    }
    if (!folds(n.op_type, inputs)) return false;
    no_extra_outputs(n);
    define(n, known(fold(n, inputs, opset_)));
    return true;
  }
  // The op's handler for run-time data; an op porta only folds is refused, naming the run-time input.
  Handler handler(const NodeProto& n) const {
    if (const auto it = handlers().find(n.op_type); it != handlers().end()) return it->second;
    std::string input;
    for (std::size_t i = 0; i < n.inputs.size() && input.empty(); ++i)
      if (find(n, i) && !find(n, i)->literal) input = n.inputs[i];
    unsupported("input '" + input + "' depends on run-time data; porta evaluates " + n.op_type +
                " only at load time, on values known then (initializers, Constants and shapes)");
  }
  static Value known(Literal lit) { return Value{{}, std::make_shared<Literal>(std::move(lit))}; }
  // The dims of input i, known at load time whether or not its values are.
  Shape dims(const NodeProto& n, std::size_t i) const {
    const Value* v = find(n, i);
    if (!v) invalid("input " + std::to_string(i) + " is required");
    return v->literal ? v->literal->dims : g_.shape(v->tensor);
  }

  // --- windows ----------------------------------------------------------------------------------
  // Explicit pads, or the pads auto_pad implies for this input size.
  std::array<std::int64_t, 4> pads(const Attrs& a, const Shape& x, const std::array<std::int64_t, 2>& kernel,
                                   const std::array<std::int64_t, 2>& stride,
                                   const std::array<std::int64_t, 2>& dilation) const {
    const std::string mode = a.string("auto_pad", "NOTSET");
    if (mode == "NOTSET") return a.array<4>("pads", 0);
    std::array<std::int64_t, 4> p{0, 0, 0, 0};
    if (mode == "VALID") return p;
    if (mode != "SAME_UPPER" && mode != "SAME_LOWER")
      invalid("auto_pad '" + mode + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
    for (int i = 0; i < 2; ++i) {
      const std::int64_t in = x[2 + i];
      constexpr std::int64_t limit = std::int64_t{1} << 31;
      if (std::min({stride[i], kernel[i], dilation[i]}) < 1 || std::max({stride[i], kernel[i], dilation[i]}) > limit)
        invalid("kernel, strides and dilations must be in [1, 2^31] for auto_pad");
      const std::int64_t out = (in + stride[i] - 1) / stride[i];
      const std::int64_t total =
          std::max<std::int64_t>(0, (out - 1) * stride[i] + (kernel[i] - 1) * dilation[i] + 1 - in);
      const std::int64_t small = total / 2, large = total - small;
      p[i] = mode == "SAME_UPPER" ? small : large;
      p[i + 2] = mode == "SAME_UPPER" ? large : small;
    }
    return p;
  }
  Tensor spatial_input(const NodeProto& n) {
    const Tensor x = tensor(n, 0);
    if (g_.shape(x).size() != 4)
      unsupported("input " + to_string(g_.shape(x)) + " is not 4-D; porta supports 2-D (NCHW) windows only");
    return x;
  }

  // --- ops --------------------------------------------------------------------------------------
  void conv(const NodeProto& n, const Attrs& a) {
    const Tensor x = spatial_input(n), w = tensor(n, 1), bias = optional_tensor(n, 2);
    const Shape& sw = g_.shape(w);
    if (sw.size() != 4) invalid("weights " + to_string(sw) + " must be 4-D for a 2-D convolution");
    const std::array<std::int64_t, 2> kernel{sw[2], sw[3]};
    if (a.find("kernel_shape", AttrType::Ints) && a.array<2>("kernel_shape", 0) != kernel)
      invalid("kernel_shape " + to_string(a.ints("kernel_shape", {})) + " does not match the weights " + to_string(sw));
    Conv2dParams p;
    p.stride = a.array<2>("strides", 1);
    p.dilation = a.array<2>("dilations", 1);
    p.groups = a.int64("group", 1);
    p.pad = pads(a, g_.shape(x), kernel, p.stride, p.dilation);
    define(n, g_.conv2d(x, w, p, bias, unique(base_name(n))));
  }

  void pool(const NodeProto& n, const Attrs& a, bool max) {
    const Tensor x = spatial_input(n);
    no_extra_outputs(n);
    if (!a.find("kernel_shape", AttrType::Ints)) invalid("kernel_shape is required");
    if (a.int64("storage_order", 0) != 0) unsupported("storage_order 1 (column-major indices) is not supported");
    Pool2dParams p;
    p.kernel = a.array<2>("kernel_shape", 1);
    p.stride = a.array<2>("strides", 1);
    p.dilation = a.array<2>("dilations", 1);
    p.ceil_mode = a.int64("ceil_mode", 0) != 0;
    p.count_include_pad = a.int64("count_include_pad", 0) != 0;
    p.pad = pads(a, g_.shape(x), p.kernel, p.stride, p.dilation);
    const std::string name = unique(base_name(n));
    define(n, max ? g_.max_pool2d(x, p, name) : g_.avg_pool2d(x, p, name));
  }
  void max_pool(const NodeProto& n, const Attrs& a) { pool(n, a, true); }
  void average_pool(const NodeProto& n, const Attrs& a) { pool(n, a, false); }
  void global_average_pool(const NodeProto& n, const Attrs&) {
    define(n, g_.global_avg_pool(spatial_input(n), unique(base_name(n))));
  }

  void gemm(const NodeProto& n, const Attrs& a) {
    GemmParams p;
    p.trans_a = a.int64("transA", 0) != 0;
    p.trans_b = a.int64("transB", 0) != 0;
    p.alpha = a.float32("alpha", 1.0f);
    p.beta = a.float32("beta", 1.0f);
    const Tensor x = tensor(n, 0), w = tensor(n, 1), c = optional_tensor(n, 2);
    define(n, g_.gemm(x, w, p, c, unique(base_name(n))));
  }
  void matmul(const NodeProto& n, const Attrs&) {
    const Tensor x = tensor(n, 0), y = tensor(n, 1);
    define(n, g_.matmul(x, y, {}, unique(base_name(n))));
  }

  template <Tensor (Graph::*Op)(Tensor, Tensor, std::string)>
  void binary(const NodeProto& n, const Attrs&) {
    const Tensor x = tensor(n, 0), y = tensor(n, 1);
    define(n, (g_.*Op)(x, y, unique(base_name(n))));
  }
  template <Tensor (Graph::*Op)(Tensor, std::string)>
  void unary(const NodeProto& n, const Attrs&) {
    define(n, (g_.*Op)(tensor(n, 0), unique(base_name(n))));
  }

  void clip(const NodeProto& n, const Attrs& a) {
    constexpr float inf = std::numeric_limits<float>::infinity();
    const Tensor x = tensor(n, 0);
    float lo = -inf, hi = inf;
    if (opset_ < 11) {
      lo = a.float32("min", -inf);
      hi = a.float32("max", inf);
    } else {
      lo = scalar(n, 1, "min", -inf);
      hi = scalar(n, 2, "max", inf);
    }
    define(n, g_.clip(x, lo, hi, unique(base_name(n))));
  }
  void hard_sigmoid(const NodeProto& n, const Attrs& a) {
    const HardSigmoidParams p{.alpha = a.float32("alpha", 0.2f), .beta = a.float32("beta", 0.5f)};
    define(n, g_.hard_sigmoid(tensor(n, 0), p, unique(base_name(n))));
  }

  void batch_norm(const NodeProto& n, const Attrs& a) {
    no_extra_outputs(n);
    if (a.int64("training_mode", 0) != 0) unsupported("training_mode 1 is not supported; porta runs inference");
    if (opset_ < 9 && a.int64("spatial", 1) == 0) unsupported("spatial 0 (per-element statistics) is not supported");
    const Tensor x = tensor(n, 0), scale = tensor(n, 1), bias = tensor(n, 2), mean = tensor(n, 3), var = tensor(n, 4);
    define(n, g_.batchnorm(x, scale, bias, mean, var, {a.float32("epsilon", 1e-5f)}, unique(base_name(n))));
  }

  void softmax(const NodeProto& n, const Attrs& a) {
    const Tensor x = tensor(n, 0);
    const Shape shape = g_.shape(x);
    const auto rank = static_cast<std::int64_t>(shape.size());
    std::int64_t axis = a.int64("axis", opset_ < 13 ? 1 : -1);
    if (axis < -rank || axis >= rank)
      invalid("axis " + std::to_string(axis) + " is out of range for input " + to_string(shape));
    if (axis < 0) axis += rank;
    if (opset_ >= 13 || axis == rank - 1) {
      define(n, g_.softmax(x, axis, unique(base_name(n))));
      return;
    }
    // Before opset 13, Softmax normalises over all dimensions from `axis` on, as one.
    const std::string base = base_name(n);
    const Tensor flat = g_.flatten(x, axis, unique(base + "/flatten"));
    const Tensor y = g_.softmax(flat, -1, unique(base + "/softmax"));
    define(n, g_.reshape(y, shape, unique(base)));
  }

  void flatten(const NodeProto& n, const Attrs& a) {
    define(n, g_.flatten(tensor(n, 0), a.int64("axis", 1), unique(base_name(n))));
  }
  void reshape(const NodeProto& n, const Attrs& a) {
    const Tensor x = tensor(n, 0);
    std::vector<std::int64_t> shape;
    if (opset_ < 5) {
      shape = a.ints("shape", {});
    } else {
      const Literal* lit = optional_literal(n, 1, "shape");
      if (!lit) invalid("input 1 (shape) is required");
      if (lit->is_float) invalid("shape '" + n.inputs[1] + "' must be an int64 tensor");
      shape = lit->ints;
    }
    if (a.int64("allowzero", 0) != 0 && std::count(shape.begin(), shape.end(), 0))
      unsupported("allowzero 1 with a 0 in the shape would make an empty tensor");
    define(n, g_.reshape(x, Shape(shape.begin(), shape.end()), unique(base_name(n))));
  }
  void cast(const NodeProto& n, const Attrs& a) {
    const DType to = storage_dtype(a.int64("to", 0), "'to' is ", " casts of run-time data");
    define(n, g_.cast(tensor(n, 0), to, unique(base_name(n))));
  }
  // Indices known at load time may be a scalar (rank 0), which drops the axis; porta has no rank 0,
  // so the gather takes them as [1] and a reshape drops that dimension.
  void gather(const NodeProto& n, const Attrs& a) {
    const Tensor data = tensor(n, 0), indices = tensor(n, 1);
    const bool scalar_indices = find(n, 1)->literal && find(n, 1)->literal->dims.empty();
    const std::string base = base_name(n);
    if (!scalar_indices) return define(n, g_.gather(data, indices, a.int64("axis", 0), unique(base)));
    const Tensor y = g_.gather(data, indices, a.int64("axis", 0), unique(base + "/gather"));
    Shape shape = g_.shape(data);
    shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(std::get<GatherParams>(g_.nodes().back().params).axis));
    define(n, g_.reshape(y, shape.empty() ? Shape{1} : shape, unique(base)));
  }
  template <Comparison C>
  void compare(const NodeProto& n, const Attrs&) {
    const Tensor x = tensor(n, 0), y = tensor(n, 1);
    define(n, g_.compare(x, y, C, unique(base_name(n))));
  }
  template <LogicalOp Op>
  void logical(const NodeProto& n, const Attrs&) {
    std::vector<Tensor> xs{tensor(n, 0)};
    if (Op != LogicalOp::Not) xs.push_back(tensor(n, 1));
    define(n, g_.logical(Op, std::move(xs), unique(base_name(n))));
  }
  void where(const NodeProto& n, const Attrs&) {
    const Tensor cond = tensor(n, 0), x = tensor(n, 1), y = tensor(n, 2);
    define(n, g_.where(cond, x, y, unique(base_name(n))));
  }
  void transpose(const NodeProto& n, const Attrs& a) {
    define(n, g_.transpose(tensor(n, 0), a.ints("perm", {}), unique(base_name(n))));
  }
  void concat(const NodeProto& n, const Attrs& a) {
    if (!a.find("axis", AttrType::Int)) invalid("attribute 'axis' is required");
    std::vector<Tensor> xs;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) xs.push_back(tensor(n, i));
    define(n, g_.concat(xs, a.int64("axis", 0), unique(base_name(n))));
  }

  // An int64 input known at load time (an initializer or a Constant), or `fallback` where absent.
  std::vector<std::int64_t> ints_input(const NodeProto& n, std::size_t i, std::string_view what,
                                       std::vector<std::int64_t> fallback = {}) const {
    const Literal* lit = optional_literal(n, i, what);
    if (!lit) return fallback;
    if (lit->is_float) invalid(std::string(what) + " '" + n.inputs[i] + "' must be an integer tensor");
    return lit->ints;
  }
  void slice(const NodeProto& n, const Attrs& a) {
    SliceParams p;
    if (opset_ < 10) {
      p = {a.ints("starts", {}), a.ints("ends", {}), a.ints("axes", {}), {}};
    } else {
      if (!find(n, 1) || !find(n, 2)) invalid("inputs 1 (starts) and 2 (ends) are required");
      p = {ints_input(n, 1, "starts"), ints_input(n, 2, "ends"), ints_input(n, 3, "axes"), ints_input(n, 4, "steps")};
    }
    define(n, g_.slice(tensor(n, 0), p, unique(base_name(n))));
  }
  // Sizes from the attribute (< 13) or input 1, else equal pieces, one per output (the last
  // smaller where opset 18's num_outputs does not divide the axis).
  void split(const NodeProto& n, const Attrs& a) {
    const Tensor x = tensor(n, 0);
    const Shape& sx = g_.shape(x);
    const std::int64_t axis = a.int64("axis", 0), rank = static_cast<std::int64_t>(sx.size());
    if (axis < -rank || axis >= rank) invalid("axis " + std::to_string(axis) + " is out of range for " + to_string(sx));
    std::vector<std::int64_t> sizes = opset_ < 13 ? a.ints("split", {}) : ints_input(n, 1, "split");
    if (sizes.empty()) {
      const std::int64_t extent = sx[static_cast<std::size_t>(axis < 0 ? axis + rank : axis)];
      const std::int64_t pieces = a.int64("num_outputs", static_cast<std::int64_t>(n.outputs.size()));
      if (pieces < 1) invalid("num_outputs " + std::to_string(pieces) + " must be >= 1");
      const std::int64_t chunk = (extent + pieces - 1) / pieces;
      for (std::int64_t left = extent; left > 0; left -= chunk) sizes.push_back(std::min(chunk, left));
    }
    if (sizes.size() != n.outputs.size())
      invalid(std::to_string(sizes.size()) + " pieces for " + std::to_string(n.outputs.size()) + " outputs");
    const std::vector<Tensor> pieces = g_.split(x, axis, sizes, unique(base_name(n)));
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      if (!values_.emplace(n.outputs[i], Value{pieces[i], nullptr}).second)
        invalid("output '" + n.outputs[i] + "' is already defined elsewhere in the graph");
    }
  }
  // Opset 18's Pad input 3: `pads` for these axes only, spread over all `rank` of them.
  static std::vector<std::int64_t> pads_of_axes(const std::vector<std::int64_t>& pads,
                                                const std::vector<std::int64_t>& axes, std::size_t rank) {
    if (pads.size() != 2 * axes.size())
      invalid("pads " + to_string(pads) + " must have two entries per axis of " + to_string(axes));
    std::vector<std::int64_t> all(2 * rank, 0);
    const auto r = static_cast<std::int64_t>(rank);
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const std::int64_t axis = axes[i] < 0 ? axes[i] + r : axes[i];
      if (axis < 0 || axis >= r) invalid("axes " + to_string(axes) + " are out of range for rank " + std::to_string(r));
      all[static_cast<std::size_t>(axis)] = pads[i];
      all[rank + static_cast<std::size_t>(axis)] = pads[axes.size() + i];
    }
    return all;
  }
  void pad(const NodeProto& n, const Attrs& a) {
    const Tensor x = tensor(n, 0);
    PadParams p;
    const std::string mode = a.string("mode", "constant");
    if (mode == "constant") p.mode = PadMode::Constant;
    else if (mode == "reflect") p.mode = PadMode::Reflect;
    else if (mode == "edge") p.mode = PadMode::Edge;
    else unsupported("mode '" + mode + "' is not supported; porta pads in constant, reflect and edge modes");
    if (opset_ < 11) {
      p.pads = a.ints("pads", {});
      p.value = a.float32("value", 0.0f);
    } else {
      if (!find(n, 1)) invalid("input 1 (pads) is required");
      p.pads = ints_input(n, 1, "pads");
      p.value = scalar(n, 2, "constant_value", 0.0f);
      if (find(n, 3)) p.pads = pads_of_axes(p.pads, ints_input(n, 3, "axes"), g_.shape(x).size());
    }
    define(n, g_.pad(x, p, unique(base_name(n))));
  }
  void expand(const NodeProto& n, const Attrs&) {
    if (!find(n, 1)) invalid("input 1 (shape) is required");
    const std::vector<std::int64_t> shape = ints_input(n, 1, "shape");
    define(n, g_.expand(tensor(n, 0), Shape(shape.begin(), shape.end()), unique(base_name(n))));
  }

  // Identity and inference-mode Dropout pass their input on, constant or not.
  // Axes are an input from opset 13 (ReduceSum) or 18 (the others), before that an attribute.
  template <Reduction R>
  void reduce(const NodeProto& n, const Attrs& a) {
    ReduceParams p{.op = R, .axes = {}, .keepdims = a.int64("keepdims", 1) != 0};
    if (opset_ >= (R == Reduction::Sum ? 13 : 18)) {
      if (const Literal* lit = optional_literal(n, 1, "axes")) {
        if (lit->is_float) invalid("axes '" + n.inputs[1] + "' must be an int64 tensor");
        p.axes = lit->ints;
      }
      if (p.axes.empty() && a.int64("noop_with_empty_axes", 0) != 0) return identity(n, a);
    } else {
      p.axes = a.ints("axes", {});
    }
    define(n, g_.reduce(tensor(n, 0), std::move(p), unique(base_name(n))));
  }
  void einsum(const NodeProto& n, const Attrs& a) {
    const Attribute* equation = a.find("equation", AttrType::String);
    if (!equation) invalid("attribute 'equation' is required");
    std::vector<Tensor> xs;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) xs.push_back(tensor(n, i));
    define(n, detail::einsum(g_, equation->s, xs, unique(base_name(n))));
  }
  // Opset 20's Gelu: `approximate` "none" (erf) or "tanh".
  void gelu(const NodeProto& n, const Attrs& a) {
    const std::string form = a.string("approximate", "none");
    if (form != "none" && form != "tanh") invalid("attribute 'approximate' is '" + form + "', not 'none' or 'tanh'");
    define(n, g_.gelu(tensor(n, 0), {.tanh_approximation = form == "tanh"}, unique(base_name(n))));
  }
  // Opset 23's RMSNormalization: x / sqrt(mean(x^2 over the axes from `axis`) + epsilon) * scale.
  void rms_norm(const NodeProto& n, const Attrs& a) {
    if (a.int64("stash_type", 1) != 1) unsupported("stash_type other than 1 (float): porta normalises in f32");
    const NormParams p{.axis = a.int64("axis", -1), .epsilon = a.float32("epsilon", 1e-5f)};
    define(n, g_.rms_norm(tensor(n, 0), tensor(n, 1), p, unique(base_name(n))));
  }
  void layer_norm(const NodeProto& n, const Attrs& a) {
    no_extra_outputs(n);  // Mean and InvStdDev are for training
    const NormParams p{.axis = a.int64("axis", -1), .epsilon = a.float32("epsilon", 1e-5f)};
    define(n, g_.layer_norm(tensor(n, 0), tensor(n, 1), optional_tensor(n, 2), p, unique(base_name(n))));
  }
  // Identity passes its input on, constant or not.
  void identity(const NodeProto& n, const Attrs&) {
    const Value* v = find(n, 0);
    if (!v) invalid("input 0 is required");
    define(n, *v);
  }
  // Inference-mode Dropout: the input passes on and the optional mask (output 1) is all true. So
  // does a training-mode one of ratio 0, which drops nothing (torchvision's Swin exports its
  // attention dropout so).
  void dropout(const NodeProto& n, const Attrs& a) {
    if (opset_ >= 12 && training_mode(n) != 0.0f && scalar(n, 1, "ratio", 0.5f) != 0.0f)
      unsupported("training_mode true is not supported; porta runs inference");
    for (std::size_t i = 2; i < n.outputs.size(); ++i)
      if (!n.outputs[i].empty()) invalid("Dropout has two outputs, the node names " + std::to_string(n.outputs.size()));
    identity(n, a);
    if (n.outputs.size() < 2 || n.outputs[1].empty()) return;
    const Shape shape = dims(n, 0);
    const auto count = static_cast<std::size_t>(folded_count(shape));
    if (!values_.emplace(n.outputs[1], known(int_literal(shape, std::vector<std::int64_t>(count, 1)))).second)
      invalid("output '" + n.outputs[1] + "' is already defined elsewhere in the graph");
  }
  float training_mode(const NodeProto& n) const {
    const Value* v = find(n, 2);
    if (!v) return 0.0f;
    if (!v->literal) unsupported("training_mode '" + n.inputs[2] + "' depends on run-time data; porta runs inference");
    if (v->literal->numel() != 1) invalid("training_mode must hold one value");
    return v->literal->floats()[0];
  }

  // Shape and Size are known at load time for every value: porta's shapes are static.
  void shape(const NodeProto& n, const Attrs& a) {
    const Shape d = dims(n, 0);
    const auto rank = static_cast<std::int64_t>(d.size());
    const auto clamped = [&](std::int64_t i) { return std::clamp<std::int64_t>(i < 0 ? i + rank : i, 0, rank); };
    const std::int64_t begin = clamped(a.int64("start", 0)), end = std::max(begin, clamped(a.int64("end", rank)));
    define(n, known(int_literal({end - begin}, std::vector<std::int64_t>(d.begin() + begin, d.begin() + end))));
  }
  void size(const NodeProto& n, const Attrs&) {
    std::int64_t count = 1;
    for (const auto d : dims(n, 0)) count *= d;
    define(n, known(int_literal({}, {count})));
  }
  // Squeeze and Unsqueeze of run-time data: a reshape (porta has no rank 0: a scalar is [1]).
  void squeeze(const NodeProto& n, const Attrs& a) {
    Shape shape = squeezed(dims(n, 0), axes(a, optional_literal(n, 1, "axes"), opset_, 13));
    if (shape.empty()) shape.push_back(1);
    define(n, g_.reshape(tensor(n, 0), shape, unique(base_name(n))));
  }
  void unsqueeze(const NodeProto& n, const Attrs& a) {
    const Shape shape = unsqueezed(dims(n, 0), axes(a, optional_literal(n, 1, "axes"), opset_, 13));
    define(n, g_.reshape(tensor(n, 0), shape, unique(base_name(n))));
  }
  void constant(const NodeProto& n, const Attrs& a) {
    auto lit = std::make_shared<Literal>();
    lit->name = n.outputs.empty() ? std::string() : n.outputs[0];
    if (const Attribute* t = a.find("value", AttrType::Tensor)) {
      if (!t->t) invalid("attribute 'value' holds no tensor");
      *lit = decode_literal(*t->t, "Constant value");
    } else if (const Attribute* f = a.find("value_float", AttrType::Float)) {
      std::vector<std::byte> data(4);
      store_from_f32(data.data(), 0, DType::f32, f->f);
      lit->own(std::move(data));
    } else if (const Attribute* fs = a.find("value_floats", AttrType::Floats)) {
      lit->dims = {static_cast<std::int64_t>(fs->floats.size())};
      std::vector<std::byte> data(4 * fs->floats.size());
      for (std::size_t i = 0; i < fs->floats.size(); ++i) store_from_f32(data.data(), i, DType::f32, fs->floats[i]);
      lit->own(std::move(data));
    } else if (const Attribute* i = a.find("value_int", AttrType::Int)) {
      lit->is_float = false;
      lit->dtype = DType::i64;
      lit->ints = {i->i};
    } else if (const Attribute* is = a.find("value_ints", AttrType::Ints)) {
      lit->is_float = false;
      lit->dtype = DType::i64;
      lit->dims = {static_cast<std::int64_t>(is->ints.size())};
      lit->ints = is->ints;
    } else {
      unsupported("only value, value_float(s) and value_int(s) constants are supported");
    }
    define(n, Value{{}, std::move(lit)});
  }

  const GraphProto& graph_;
  std::int64_t opset_;
  const LoadOptions& options_;
  const std::filesystem::path* folder_;
  std::deque<std::vector<std::uint8_t>> external_bytes_;  // what initializers' literals view
  Graph g_;
  std::unordered_map<std::string, Value> values_;
  std::unordered_set<std::string> names_;
  std::size_t index_ = 0;  // the node being imported
};

const std::unordered_map<std::string_view, Importer::Handler>& Importer::handlers() {
  static const std::unordered_map<std::string_view, Handler> table{
      {"Conv", &Importer::conv},
      {"Gemm", &Importer::gemm},
      {"MatMul", &Importer::matmul},
      {"Add", &Importer::binary<&Graph::add>},
      {"Sub", &Importer::binary<&Graph::sub>},
      {"Mul", &Importer::binary<&Graph::mul>},
      {"Div", &Importer::binary<&Graph::div>},
      {"Relu", &Importer::unary<&Graph::relu>},
      {"Sigmoid", &Importer::unary<&Graph::sigmoid>},
      {"Tanh", &Importer::unary<&Graph::tanh>},
      {"Clip", &Importer::clip},
      {"HardSigmoid", &Importer::hard_sigmoid},
      {"HardSwish", &Importer::unary<&Graph::hard_swish>},
      {"Erf", &Importer::unary<&Graph::erf>},
      {"Sqrt", &Importer::unary<&Graph::sqrt>},
      {"Reciprocal", &Importer::unary<&Graph::reciprocal>},
      {"Pow", &Importer::binary<&Graph::pow>},
      {"ReduceSum", &Importer::reduce<Reduction::Sum>},
      {"ReduceMean", &Importer::reduce<Reduction::Mean>},
      {"ReduceMax", &Importer::reduce<Reduction::Max>},
      {"ReduceMin", &Importer::reduce<Reduction::Min>},
      {"LayerNormalization", &Importer::layer_norm},
      {"MaxPool", &Importer::max_pool},
      {"AveragePool", &Importer::average_pool},
      {"GlobalAveragePool", &Importer::global_average_pool},
      {"Flatten", &Importer::flatten},
      {"Reshape", &Importer::reshape},
      {"Transpose", &Importer::transpose},
      {"Cast", &Importer::cast},
      {"Concat", &Importer::concat},
      {"Slice", &Importer::slice},
      {"Split", &Importer::split},
      {"Pad", &Importer::pad},
      {"Expand", &Importer::expand},
      {"BatchNormalization", &Importer::batch_norm},
      {"Softmax", &Importer::softmax},
      {"Identity", &Importer::identity},
      {"Shape", &Importer::shape},
      {"Size", &Importer::size},
      {"Squeeze", &Importer::squeeze},
      {"Unsqueeze", &Importer::unsqueeze},
      {"Dropout", &Importer::dropout},
      {"Constant", &Importer::constant},
      {"Gather", &Importer::gather},
      {"Equal", &Importer::compare<Comparison::Equal>},
      {"Less", &Importer::compare<Comparison::Less>},
      {"LessOrEqual", &Importer::compare<Comparison::LessOrEqual>},
      {"Greater", &Importer::compare<Comparison::Greater>},
      {"GreaterOrEqual", &Importer::compare<Comparison::GreaterOrEqual>},
      {"Not", &Importer::logical<LogicalOp::Not>},
      {"And", &Importer::logical<LogicalOp::And>},
      {"Or", &Importer::logical<LogicalOp::Or>},
      {"Where", &Importer::where},
      {"Einsum", &Importer::einsum},
      {"Gelu", &Importer::gelu},
      {"RMSNormalization", &Importer::rms_norm},
  };
  return table;
}

Graph import_model(std::span<const std::byte> bytes, const LoadOptions& options, const std::filesystem::path* folder) {
  const ModelProto model = decode_model({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
  if (!model.graph) invalid("the model has no graph (" + std::to_string(bytes.size()) + " bytes read)");
  std::int64_t opset = -1;
  for (const auto& [domain, version] : model.opsets)
    if (is_default_domain(domain)) opset = version;
  if (opset < 0) invalid("the model imports no version of the default ONNX opset");
  if (opset < min_opset || opset > max_opset)
    unsupported("the model's default-domain opset " + std::to_string(opset) + " is outside the range porta imports (" +
                std::to_string(min_opset) + " to " + std::to_string(max_opset) + ")" +
                (opset > max_opset ? "; export with an older opset (torch.onnx.export's opset_version)" : ""));
  return Importer(*model.graph, opset, options, folder).run();
}

}  // namespace

Graph load_bytes(std::span<const std::byte> bytes, const LoadOptions& options) {
  return import_model(bytes, options, nullptr);
}

Graph load(const std::filesystem::path& path, const LoadOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(ErrorCode::IoError, "ONNX: '" + path.string() + "' is a directory");
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) throw Error(ErrorCode::IoError, "ONNX: cannot open '" + path.string() + "'");
  const auto size = static_cast<std::size_t>(std::max<std::streamoff>(0, file.tellg()));
  const std::unique_ptr<std::byte[]> data(new std::byte[size]);  // not zeroed: models run to gigabytes
  file.seekg(0);
  if (!file.read(reinterpret_cast<char*>(data.get()), static_cast<std::streamsize>(size)))
    throw Error(ErrorCode::IoError, "ONNX: reading '" + path.string() + "' failed");
  const std::byte* p = data.get();
  try {
    const std::filesystem::path folder = path.parent_path();
    return import_model({p, size}, options, &folder);
  } catch (const Error& e) {
    throw Error(e.code(), path.filename().string() + ": " + e.what());
  }
}

}  // namespace porta::onnx
