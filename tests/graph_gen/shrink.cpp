#include "graph_gen/shrink.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <variant>

namespace porta::graph_gen {
namespace {

constexpr std::int32_t dropped = -1;

// The recipe without the steps i where to[i] != i: their readers read step to[i] (an earlier one)
// instead, which takes their outputs too; with to[i] == dropped, nothing may read them.
Recipe remap(const Recipe& recipe, const std::vector<std::int32_t>& to) {
  Recipe out;
  out.input_seed = recipe.input_seed;
  std::vector<std::int32_t> index(recipe.steps.size(), dropped);
  for (std::size_t i = 0; i < recipe.steps.size(); ++i) {
    if (to[i] != static_cast<std::int32_t>(i)) {
      index[i] = to[i] == dropped ? dropped : index[static_cast<std::size_t>(to[i])];
      continue;
    }
    Step s = recipe.steps[i];
    for (std::int32_t& operand : s.operands) operand = index[static_cast<std::size_t>(operand)];
    index[i] = static_cast<std::int32_t>(out.steps.size());
    out.steps.push_back(std::move(s));
  }
  for (std::size_t i = 0; i < recipe.steps.size(); ++i)
    if (to[i] != static_cast<std::int32_t>(i) && index[i] != dropped)
      out.steps[static_cast<std::size_t>(index[i])].outputs += recipe.steps[i].outputs;
  return out;
}

// Without the steps no output depends on.
Recipe prune(const Recipe& recipe) {
  std::vector<bool> needed(recipe.steps.size(), false);
  for (std::size_t i = recipe.steps.size(); i-- > 0;) {
    const Step& s = recipe.steps[i];
    if (s.outputs > 0) needed[i] = true;
    if (needed[i])
      for (const std::int32_t operand : s.operands) needed[static_cast<std::size_t>(operand)] = true;
  }
  std::vector<std::int32_t> to(recipe.steps.size(), dropped);
  for (std::size_t i = 0; i < to.size(); ++i)
    if (needed[i]) to[i] = static_cast<std::int32_t>(i);
  return remap(recipe, to);
}

std::vector<std::int32_t> identity(std::size_t size) {
  std::vector<std::int32_t> to(size);
  for (std::size_t i = 0; i < size; ++i) to[i] = static_cast<std::int32_t>(i);
  return to;
}

// Changes to one step's parameters towards the simplest op of its kind. Each returns false where the
// step already has the simpler value, so that shrinking ends.
using Simplification = bool (*)(Step&);

template <class Params>
Params* params_of(Step& s) {
  return std::get_if<Params>(&s.params);
}

template <class T>
bool set(T& field, const T& value) {
  if (field == value) return false;
  field = value;
  return true;
}

bool halve(std::int64_t& value) { return value > 1 && set(value, value / 2); }

constexpr Simplification simplifications[] = {
    [](Step& s) {  // a residual given to the conv
      auto* p = params_of<Conv2dParams>(s);
      if (p == nullptr || !p->residual) return false;
      p->residual = false;
      s.operands.resize(1);
      return true;
    },
    [](Step& s) {  // one operand fewer for a concat
      if (s.op != OpKind::Concat || s.operands.size() < 2) return false;
      s.operands.pop_back();
      return true;
    },
    [](Step& s) {
      if (auto* p = params_of<Conv2dParams>(s)) return set(p->activation, Activation::None);
      if (auto* p = params_of<GemmParams>(s)) return set(p->activation, Activation::None);
      return false;
    },
    [](Step& s) { return s.op == OpKind::Conv2d && set(s.bias, false); },
    [](Step& s) { return set(s.weights_as_input, false); },
    [](Step& s) { return set(s.depthwise, false); },
    [](Step& s) {
      auto* p = params_of<Conv2dParams>(s);
      return p != nullptr && set<std::int64_t>(p->groups, 1);
    },
    [](Step& s) {
      if (auto* p = params_of<Conv2dParams>(s)) return set(p->stride, {1, 1}) || set(p->dilation, {1, 1});
      if (auto* p = params_of<Pool2dParams>(s)) return set(p->stride, {1, 1}) || set(p->dilation, {1, 1});
      return false;
    },
    [](Step& s) {
      if (auto* p = params_of<Conv2dParams>(s)) return set(p->pad, {0, 0, 0, 0});
      if (auto* p = params_of<Pool2dParams>(s)) return set(p->pad, {0, 0, 0, 0});
      return false;
    },
    [](Step& s) { return s.op == OpKind::Conv2d && set(s.window, {1, 1}); },
    [](Step& s) {  // the builder's default layout
      if (auto* p = params_of<Conv2dParams>(s)) return set(p->layout, Layout::NCHW);
      if (auto* p = params_of<Pool2dParams>(s)) return set(p->layout, Layout::NCHW);
      if (auto* p = params_of<GlobalPoolParams>(s)) return set(p->layout, Layout::NCHW);
      return false;
    },
    [](Step& s) {
      auto* p = params_of<Pool2dParams>(s);
      return p != nullptr && (set(p->ceil_mode, false) || set(p->count_include_pad, false));
    },
    [](Step& s) {  // one filter or column: width 0 (one filter per channel) included
      const bool sized = s.op == OpKind::Conv2d || s.op == OpKind::Gemm || s.op == OpKind::MatMul;
      return sized && !s.depthwise && set<std::int64_t>(s.width, 1);
    },
    [](Step& s) { return halve(s.width); },
    [](Step& s) {
      if (auto* p = params_of<GemmParams>(s))
        return set(p->trans_a, false) || set(p->trans_b, false) || set(p->alpha, 1.0f) || set(p->beta, 1.0f);
      if (auto* p = params_of<MatMulParams>(s)) return set(p->trans_a, false) || set(p->trans_b, false);
      return false;
    },
    [](Step& s) {  // gemm without C; a binary op's constant a scalar
      if (s.op == OpKind::Gemm) return set(s.constant, ConstantShape::None);
      return s.constant != ConstantShape::None && s.op != OpKind::MatMul && set(s.constant, ConstantShape::Scalar);
    },
};

class Shrinker {
 public:
  Shrinker(Recipe recipe, const std::function<bool(const Graph&)>& fails) : best_(std::move(recipe)), fails_(fails) {}

  Recipe run() && {
    best_ = prune(best_);
    while (drop_output() || bypass_step() || cut_step() || shrink_inputs() || simplify_steps()) {
    }
    return std::move(best_);
  }

 private:
  bool take(const Recipe& candidate) {
    const Recipe pruned = prune(candidate);
    const auto built = build(pruned);
    if (!built || built->graph.outputs().empty() || !fails_(built->graph)) return false;
    best_ = pruned;
    return true;
  }

  std::size_t size() const { return best_.steps.size(); }

  bool drop_output() {
    int outputs = 0;
    for (const Step& s : best_.steps) outputs += s.outputs;
    for (std::size_t i = 0; outputs > 1 && i < size(); ++i) {
      if (best_.steps[i].outputs == 0) continue;
      Recipe candidate = best_;
      --candidate.steps[i].outputs;
      if (take(candidate)) return true;
    }
    return false;
  }

  // Latest first: the steps near the outputs go before those they depend on.
  bool bypass_step() {
    for (std::size_t i = size(); i-- > 0;) {
      const Step& s = best_.steps[i];
      for (const std::int32_t operand : s.operands) {
        std::vector<std::int32_t> to = identity(size());
        to[i] = operand;
        if (take(remap(best_, to))) return true;
      }
    }
    return false;
  }

  bool cut_step() {
    const auto built = build(best_);
    for (std::size_t i = size(); built && i-- > 0;) {
      if (best_.steps[i].input) continue;
      Step input;
      input.input = true;
      input.shape = built->graph.shape(built->values[i]);
      input.dtype = built->graph.dtype(built->values[i]);
      input.outputs = best_.steps[i].outputs;
      Recipe candidate = best_;
      candidate.steps[i] = std::move(input);
      if (take(candidate)) return true;
    }
    return false;
  }

  // Each dimension of each input to 1, else halved, else one less; the dtype to f32.
  bool shrink_inputs() {
    bool changed = false;
    for (std::size_t i = 0; i < size(); ++i) {
      if (!best_.steps[i].input) continue;
      for (std::size_t d = 0; d < best_.steps[i].shape.size(); ++d) {
        for (const auto smaller : {std::int64_t{1}, best_.steps[i].shape[d] / 2, best_.steps[i].shape[d] - 1}) {
          if (smaller < 1 || smaller >= best_.steps[i].shape[d]) continue;
          Recipe candidate = best_;
          candidate.steps[i].shape[d] = smaller;
          if (take(candidate)) {
            changed = true;
            break;
          }
        }
      }
      Recipe candidate = best_;
      if (set(candidate.steps[i].dtype, DType::f32) && take(candidate)) changed = true;
    }
    return changed;
  }

  bool simplify_steps() {
    bool changed = false;
    for (std::size_t i = 0; i < size(); ++i)
      for (const Simplification simplify : simplifications) {
        Recipe candidate = best_;
        const std::size_t before = size();
        if (candidate.steps[i].input || !simplify(candidate.steps[i]) || !take(candidate)) continue;
        if (size() != before) return true;  // steps were pruned: the indices moved
        changed = true;
      }
    return changed;
  }

  Recipe best_;
  const std::function<bool(const Graph&)>& fails_;
};

// --- builder code ---------------------------------------------------------------------------------

std::string float_literal(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", static_cast<double>(v));
  std::string s = text;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + "f";
}

template <class Range>
std::string braced(const Range& values) {
  std::string s = "{";
  for (const auto& v : values) s += (s.size() > 1 ? ", " : "") + std::to_string(v);
  return s + "}";
}

std::string_view identifier(DType t) { return t == DType::boolean ? "boolean" : to_string(t); }  // the enumerators

std::string_view identifier(Layout l) { return l == Layout::NHWC ? "NHWC" : "NCHW"; }

std::string_view identifier(PadMode m) {
  switch (m) {
    case PadMode::Constant: return "Constant";
    case PadMode::Reflect: return "Reflect";
    case PadMode::Edge: return "Edge";
  }
  return "Constant";
}

std::string_view identifier(Activation a) {
  switch (a) {
    case Activation::None: return "None";
    case Activation::Relu: return "Relu";
    case Activation::Relu6: return "Relu6";
    case Activation::Sigmoid: return "Sigmoid";
    case Activation::Silu: return "Silu";
    case Activation::Tanh: return "Tanh";
    case Activation::Gelu: return "Gelu";
  }
  return "None";
}

// Designated initializers of the fields that differ from their defaults, in declaration order.
class Fields {
 public:
  template <class T>
  Fields& add(std::string_view name, const T& value, const T& default_value, const std::string& text) {
    if (value != default_value)
      fields_ += std::string(fields_.empty() ? "" : ", ") + "." + std::string(name) + " = " + text;
    return *this;
  }
  std::string str() const { return "{" + fields_ + "}"; }

 private:
  std::string fields_;
};

std::string params_code(const OpParams& params) {
  Fields f;
  if (const auto* p = std::get_if<Conv2dParams>(&params)) {
    const Conv2dParams d;
    f.add("stride", p->stride, d.stride, braced(p->stride))
        .add("pad", p->pad, d.pad, braced(p->pad))
        .add("dilation", p->dilation, d.dilation, braced(p->dilation))
        .add("groups", p->groups, d.groups, std::to_string(p->groups))
        .add("activation", p->activation, d.activation, "Activation::" + std::string(identifier(p->activation)))
        .add("layout", p->layout, d.layout, "Layout::" + std::string(identifier(p->layout)));
  } else if (const auto* p = std::get_if<GemmParams>(&params)) {
    const GemmParams d;
    f.add("trans_a", p->trans_a, d.trans_a, "true")
        .add("trans_b", p->trans_b, d.trans_b, "true")
        .add("alpha", p->alpha, d.alpha, float_literal(p->alpha))
        .add("beta", p->beta, d.beta, float_literal(p->beta))
        .add("activation", p->activation, d.activation, "Activation::" + std::string(identifier(p->activation)));
  } else if (const auto* p = std::get_if<MatMulParams>(&params)) {
    f.add("trans_a", p->trans_a, false, "true").add("trans_b", p->trans_b, false, "true");
  } else if (const auto* p = std::get_if<Pool2dParams>(&params)) {
    const Pool2dParams d;
    f.add("kernel", p->kernel, d.kernel, braced(p->kernel))
        .add("stride", p->stride, d.stride, braced(p->stride))
        .add("pad", p->pad, d.pad, braced(p->pad))
        .add("dilation", p->dilation, d.dilation, braced(p->dilation))
        .add("ceil_mode", p->ceil_mode, d.ceil_mode, "true")
        .add("count_include_pad", p->count_include_pad, d.count_include_pad, "true")
        .add("layout", p->layout, d.layout, "Layout::" + std::string(identifier(p->layout)));
  } else if (const auto* p = std::get_if<GlobalPoolParams>(&params)) {
    f.add("layout", p->layout, Layout::NCHW, "Layout::" + std::string(identifier(p->layout)));
  } else if (const auto* p = std::get_if<GeluParams>(&params)) {
    f.add("tanh_approximation", p->tanh_approximation, false, "true");
  } else if (const auto* p = std::get_if<BatchNormParams>(&params)) {
    f.add("epsilon", p->epsilon, BatchNormParams{}.epsilon, float_literal(p->epsilon));
  } else if (const auto* p = std::get_if<ReduceParams>(&params)) {
    static constexpr const char* reductions[] = {"Sum", "Mean", "Max", "Min"};
    f.add("op", p->op, Reduction::Sum, "Reduction::" + std::string(reductions[static_cast<int>(p->op)]))
        .add("axes", p->axes, std::vector<std::int64_t>{}, braced(p->axes))
        .add("keepdims", p->keepdims, true, "false");
  } else if (const auto* p = std::get_if<NormParams>(&params)) {
    const NormParams d;
    f.add("axis", p->axis, d.axis, std::to_string(p->axis))
        .add("epsilon", p->epsilon, d.epsilon, float_literal(p->epsilon));
  } else if (const auto* p = std::get_if<AttentionParams>(&params)) {
    f.add("scale", p->scale, 0.0f, float_literal(p->scale)).add("causal", p->causal, false, "true");
  } else if (const auto* p = std::get_if<DropoutParams>(&params)) {
    const DropoutParams d;
    f.add("ratio", p->ratio, d.ratio, float_literal(p->ratio))
        .add("seed", p->seed, d.seed, std::to_string(p->seed) + "u")
        .add("mask_dims", p->mask_dims, d.mask_dims, std::to_string(p->mask_dims))
        .add("batch_offset", p->batch_offset, d.batch_offset, std::to_string(p->batch_offset));
  } else if (const auto* p = std::get_if<HardSigmoidParams>(&params)) {
    const HardSigmoidParams d;
    f.add("alpha", p->alpha, d.alpha, float_literal(p->alpha)).add("beta", p->beta, d.beta, float_literal(p->beta));
  }
  return f.str();
}

class CodePrinter {
 public:
  explicit CodePrinter(const Graph& g) : g_(g) {}

  std::string run() {
    out_ << "Graph g;\n";
    for (std::size_t id = 0; id < g_.tensors().size(); ++id) tensor(id);
    for (const auto& [name, t] : g_.outputs()) out_ << "g.output(\"" << name << "\", " << var(t) << ");\n";
    return out_.str();
  }

 private:
  static std::string var(Tensor t) {  // appended: GCC 12 warns falsely (-Wrestrict) on "t" + std::to_string
    std::string name = "t";
    return name.append(std::to_string(t.id));
  }
  std::string var(std::size_t id) const { return var(Tensor{static_cast<std::int32_t>(id)}); }
  static std::string dtype_argument(DType t) {
    return t == DType::f32 ? "" : ", DType::" + std::string(identifier(t));
  }

  void tensor(std::size_t id) {
    const TensorInfo& info = g_.tensors()[id];
    const std::string shape = braced(info.desc.shape);
    if (info.role == Role::Input) {
      const std::string strides = info.input_strides.empty() ? "" : ", " + braced(info.input_strides);
      const std::string dtype = strides.empty() ? dtype_argument(info.desc.dtype)
                                                : ", DType::" + std::string(identifier(info.desc.dtype));
      out_ << "const Tensor " << var(id) << " = g.input(\"" << info.name << "\", " << shape << dtype << strides
           << ");\n";
    } else if (info.role == Role::Constant) {
      std::string values;
      std::size_t line = 0;
      for (std::int64_t i = 0; i < info.desc.numel(); ++i) {
        const std::string v =
            float_literal(load_as_f32(info.data->data(), static_cast<std::size_t>(i), info.desc.dtype));
        if (line + v.size() > 100) values += "\n    ", line = 0;
        values += v + (i + 1 < info.desc.numel() ? ", " : "");
        line += v.size() + 2;
      }
      out_ << "const Tensor " << var(id) << " = g.constant(\"" << info.name << "\", " << shape
           << ", std::vector<float>{" << values << "}" << dtype_argument(info.desc.dtype) << ");\n";
    } else {
      out_ << "const Tensor " << var(id) << " = " << call(g_.nodes()[static_cast<std::size_t>(info.producer)]) << ";\n";
    }
  }

  std::string call(const Node& n) const {
    const auto in = [&](std::size_t i) { return var(n.inputs[i]); };
    const std::string params = params_code(n.params);
    const std::string with_params = params == "{}" ? "" : ", " + params;
    static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
    switch (n.op) {
      case OpKind::Conv2d: {
        const auto& p = std::get<Conv2dParams>(n.params);
        const bool bias = n.inputs.size() > (p.residual ? 3u : 2u);
        std::string s = "g.conv2d(" + in(0) + ", " + in(1);
        if (bias || p.residual) s += ", " + params + ", " + (bias ? in(2) : "{}");
        else s += with_params;
        if (p.residual) s += ", {}, " + var(n.inputs.back());
        return s + ")";
      }
      case OpKind::Gemm:
        return "g.gemm(" + in(0) + ", " + in(1) + (n.inputs.size() > 2 ? ", " + params + ", " + in(2) : with_params) +
               ")";
      case OpKind::MatMul: return "g.matmul(" + in(0) + ", " + in(1) + with_params + ")";
      case OpKind::Clip: {
        const auto& p = std::get<ClipParams>(n.params);
        return "g.clip(" + in(0) + ", " + float_literal(p.min) + ", " + float_literal(p.max) + ")";
      }
      case OpKind::BatchNorm:
        return "g.batchnorm(" + in(0) + ", " + in(1) + ", " + in(2) + ", " + in(3) + ", " + in(4) + with_params + ")";
      case OpKind::Softmax:
        return "g.softmax(" + in(0) + ", " + std::to_string(std::get<SoftmaxParams>(n.params).axis) + ")";
      case OpKind::Reshape: return "g.reshape(" + in(0) + ", " + braced(std::get<ReshapeParams>(n.params).shape) + ")";
      case OpKind::Transpose:
        return "g.transpose(" + in(0) + ", " + braced(std::get<TransposeParams>(n.params).perm) + ")";
      case OpKind::Concat: {
        std::string xs;
        for (const Tensor t : n.inputs) xs += (xs.empty() ? "" : ", ") + var(t);
        return "g.concat(std::vector<Tensor>{" + xs + "}, " + std::to_string(std::get<ConcatParams>(n.params).axis) +
               ")";
      }
      case OpKind::Cast:
        return "g.cast(" + in(0) + ", DType::" + std::string(identifier(std::get<CastParams>(n.params).to)) + ")";
      case OpKind::Slice: {
        const auto& p = std::get<SliceParams>(n.params);
        return "g.slice(" + in(0) + ", {" + braced(p.starts) + ", " + braced(p.ends) + ", " + braced(p.axes) + ", " +
               braced(p.steps) + "})";
      }
      case OpKind::Pad: {
        const auto& p = std::get<PadParams>(n.params);
        return "g.pad(" + in(0) + ", {" + braced(p.pads) + ", PadMode::" + std::string(identifier(p.mode)) + ", " +
               float_literal(p.value) + "})";
      }
      case OpKind::Expand: return "g.expand(" + in(0) + ", " + braced(std::get<ExpandParams>(n.params).shape) + ")";
      case OpKind::Attention:
        return "g.attention(" + in(0) + ", " + in(1) + ", " + in(2) + ", " + params +
               (n.inputs.size() > 3 ? ", " + in(3) : "") + ")";
      case OpKind::MaxPool2d: return "g.max_pool2d(" + in(0) + ", " + params + ")";
      case OpKind::AvgPool2d: return "g.avg_pool2d(" + in(0) + ", " + params + ")";
      case OpKind::GlobalAvgPool: return "g.global_avg_pool(" + in(0) + with_params + ")";
      case OpKind::LayerNorm:
        return "g.layer_norm(" + in(0) + ", " + in(1) + ", " + (n.inputs.size() > 2 ? in(2) : "{}") + with_params + ")";
      case OpKind::RmsNorm: return "g.rms_norm(" + in(0) + ", " + in(1) + with_params + ")";
      case OpKind::Gather:
        return "g.gather(" + in(0) + ", " + in(1) + ", " + std::to_string(std::get<GatherParams>(n.params).axis) + ")";
      case OpKind::Compare:
      case OpKind::Logical: {  // the builder's calls: g.less(a, b), g.logical_not(x)
        std::string s = "g.";
        if (n.op == OpKind::Compare) s += to_string(std::get<CompareParams>(n.params).op);
        else s.append("logical_").append(to_string(std::get<LogicalParams>(n.params).op));
        s.append("(").append(in(0));
        if (n.inputs.size() > 1) s.append(", ").append(in(1));
        return s + ")";
      }
      case OpKind::MaxPool2dBackward: return "g.max_pool2d_backward(" + in(0) + ", " + in(1) + ", " + params + ")";
      case OpKind::DepthwiseFilterGradient:
        return "g.depthwise_filter_gradient(" + in(0) + ", " + in(1) + ", " + params + ")";
      case OpKind::ActivationBackward: {
        const auto& p = std::get<ActivationBackwardParams>(n.params);
        static constexpr const char* kinds[] = {"Relu", "Clip", "Gelu", "HardSigmoid", "HardSwish"};
        const OpKind ops[] = {OpKind::Relu, OpKind::Clip, OpKind::Gelu, OpKind::HardSigmoid, OpKind::HardSwish};
        const auto kind = std::find(std::begin(ops), std::end(ops), p.activation) - std::begin(ops);
        return "g.activation_backward(" + in(0) + ", " + in(1) + ", {OpKind::" + kinds[kind % 5] + ", {" +
               float_literal(p.clip.min) + ", " + float_literal(p.clip.max) + "}, {" +
               (p.gelu.tanh_approximation ? "true" : "false") + "}, {" + float_literal(p.hard_sigmoid.alpha) + ", " +
               float_literal(p.hard_sigmoid.beta) + "}})";
      }
      default: {  // the binary ops and the unary ones without parameters, named as the builder's calls
        std::string s = "g." + std::string(to_string(n.op)) + "(" + in(0);
        for (std::size_t i = 1; i < n.inputs.size(); ++i) s += ", " + in(i);
        return s + with_params + ")";
      }
    }
  }

  const Graph& g_;
  std::ostringstream out_;
};

}  // namespace

Recipe shrink(Recipe recipe, const std::function<bool(const Graph&)>& fails) {
  return Shrinker(std::move(recipe), fails).run();
}

std::string builder_code(const Graph& graph) { return CodePrinter(graph).run(); }

}  // namespace porta::graph_gen
