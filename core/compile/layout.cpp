#include "core/compile/layout.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <string>
#include <unordered_set>
#include <variant>
#include <vector>

#include "core/compile/rewrite.hpp"
#include "core/runtime/op_math.hpp"
#include "porta/error.hpp"

namespace porta::detail {
namespace {

constexpr std::array<std::int64_t, 4> nchw_to_nhwc{0, 2, 3, 1};
constexpr std::array<std::int64_t, 4> nhwc_to_nchw{0, 3, 1, 2};

Shape permuted(const Shape& shape, const std::array<std::int64_t, 4>& perm) {
  Shape out(4);
  for (std::size_t i = 0; i < 4; ++i) out[i] = shape[static_cast<std::size_t>(perm[i])];
  return out;
}

// Ops that compute each element from the elements at the same index of their operands (with
// numpy broadcasting): they run in any layout, given every operand in it. Not Dropout: its mask
// follows the elements' order, so it runs where ref runs it.
bool is_elementwise(OpKind op) {
  static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
  switch (op) {
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div:
    case OpKind::Relu: case OpKind::Clip: case OpKind::Sigmoid: case OpKind::Silu:
    case OpKind::Tanh: case OpKind::Gelu: case OpKind::Cast:
    case OpKind::Erf: case OpKind::Sqrt: case OpKind::Reciprocal: case OpKind::HardSigmoid: case OpKind::HardSwish:
    case OpKind::Pow: case OpKind::ActivationBackward:
      return true;
    default:
      return false;
  }
}

// A constant's bytes with its dimensions (left-padded with 1s to rank 4, as broadcasting would)
// moved from NCHW to NHWC order.
std::vector<std::byte> channels_last_bytes(const TensorInfo& info) {
  Shape s = info.desc.shape;
  s.insert(s.begin(), 4 - s.size(), 1);
  const std::size_t element = size_of(info.desc.dtype);
  std::vector<std::byte> out(info.data->size());
  std::size_t from = 0;
  for (std::int64_t n = 0; n < s[0]; ++n)
    for (std::int64_t c = 0; c < s[1]; ++c)
      for (std::int64_t h = 0; h < s[2]; ++h)
        for (std::int64_t w = 0; w < s[3]; ++w, from += element) {
          const auto to = static_cast<std::size_t>(((n * s[2] + h) * s[3] + w) * s[1] + c) * element;
          std::copy_n(info.data->begin() + static_cast<std::ptrdiff_t>(from), element, out.begin() + static_cast<std::ptrdiff_t>(to));
        }
  return out;
}

class LayoutAssigner {
 public:
  // Without a device, every conv moves to NHWC and every node the builder accepts in NHWC follows.
  LayoutAssigner(const Graph& graph, const DeviceImpl* device, const CompileOptions& options)
      : graph_(graph), device_(device), options_(options), r_(graph), nhwc_(graph.tensors().size()) {
    for (const TensorInfo& info : graph.tensors()) names_.insert(info.name);
  }

  Graph run(std::span<const std::int32_t> order) && {
    for (const std::int32_t index : order) visit(graph_.nodes()[static_cast<std::size_t>(index)]);
    for (const auto& [name, t] : graph_.outputs()) as_built(t);
    for (const auto& [variable, value] : graph_.assignments()) as_built(value);
    return std::move(r_).finish();
  }

  // Whether some conv of `order` is to move to NHWC; else the pass has nothing to do.
  bool wanted(std::span<const std::int32_t> order) const {
    return std::any_of(order.begin(), order.end(), [&](std::int32_t index) {
      const Node& node = graph_.nodes()[static_cast<std::size_t>(index)];
      return node.op == OpKind::Conv2d && node_layout(node) == Layout::NCHW && target(node) == Layout::NHWC;
    });
  }

 private:
  Layout target(const Node& conv) const {
    if (options_.layout) return *options_.layout;
    return device_ ? device_->preferred_layout(graph_, conv, options_) : Layout::NHWC;
  }

  void visit(const Node& node) {
    const bool nchw = node_layout(node) == Layout::NCHW;
    static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
    switch (node.op) {
      case OpKind::Conv2d: {
        std::vector<bool> permute(node.inputs.size(), false);  // x and the residual; not w or bias
        permute[0] = true;
        if (const int residual = conv_slots(node).residual; residual >= 0) permute[static_cast<std::size_t>(residual)] = true;
        if (nchw && target(node) == Layout::NHWC && try_channels_last(node, permute)) return;
        break;
      }
      case OpKind::MaxPool2d: case OpKind::AvgPool2d: case OpKind::GlobalAvgPool:
        // Only where the input is already channels-last: a pool alone is not worth converting for.
        if (nchw && only_channels_last(node.inputs[0]) && try_channels_last(node, {true})) return;
        break;
      case OpKind::Reduce:
        // A batch statistic of a channels-last activation: the same reduction over the permuted
        // axes, kept 4-D, rather than a transpose of the activation.
        if (only_channels_last(node.inputs[0]) && std::get<ReduceParams>(node.params).keepdims) {
          ReduceParams p = std::get<ReduceParams>(node.params);
          for (std::int64_t& axis : p.axes) axis = nhwc_to_nchw[static_cast<std::size_t>(axis)];
          std::sort(p.axes.begin(), p.axes.end());
          if (try_channels_last(node, {true}, true, p)) return;
        }
        break;
      case OpKind::BatchNorm:
        if (only_channels_last(node.inputs[0]) && graph_.dtype(node.output) == DType::f32) {
          scale_shift_channels_last(node);
          return;
        }
        break;
      case OpKind::Dropout: {
        // One draw per sample (stochastic depth) or for the whole tensor: the mask does not follow
        // the order of a sample's elements, so it runs in any layout.
        const std::int32_t mask_dims = std::get<DropoutParams>(node.params).mask_dims;
        if (mask_dims >= 0 && mask_dims <= 1 && only_channels_last(node.inputs[0]) &&
            try_channels_last(node, {true, false}))
          return;
        break;
      }
      case OpKind::DepthwiseFilterGradient:
        // Activations in, a filter out: channels-last where either activation exists so, which
        // costs no more transposes than NCHW would and runs the vector kernel.
        if (nchw && (nhwc_[index(node.inputs[0])] || nhwc_[index(node.inputs[1])]) &&
            try_channels_last(node, {true, true}, false))
          return;
        break;
      default:
        if (is_elementwise(node.op) && graph_.shape(node.output).size() == 4 && convertible(node) &&
            std::any_of(node.inputs.begin(), node.inputs.end(), [&](Tensor t) { return only_channels_last(t); }) &&
            try_channels_last(node, std::vector<bool>(node.inputs.size(), true)))
          return;
        break;
    }
    std::vector<Tensor> inputs;
    for (const Tensor t : node.inputs) inputs.push_back(as_built(t));
    r_.replace(node.output, r_.add(node, node.params, inputs));
  }

  bool only_channels_last(Tensor t) const { return nhwc_[index(t)] && !r_.find(t); }

  // Every operand of an elementwise node is 4-D, or a constant that broadcasts as one.
  bool convertible(const Node& node) const {
    return std::all_of(node.inputs.begin(), node.inputs.end(), [&](Tensor t) {
      return graph_.shape(t).size() == 4 || (graph_.info(t).role == Role::Constant && graph_.shape(t).size() < 4);
    });
  }

  // Emits `node` in NHWC, its inputs marked in `permute` taken channels-last, if the device runs it
  // so; its output then exists channels-last only, unless it is no activation (`permute_output`).
  bool try_channels_last(const Node& node, const std::vector<bool>& permute, bool permute_output = true) {
    return try_channels_last(node, permute, permute_output, node.params);
  }
  bool try_channels_last(const Node& node, const std::vector<bool>& permute, bool permute_output, OpParams params) {
    if (auto* conv = std::get_if<Conv2dParams>(&params)) conv->layout = Layout::NHWC;
    if (auto* pool = std::get_if<Pool2dParams>(&params)) pool->layout = Layout::NHWC;
    if (auto* global = std::get_if<GlobalPoolParams>(&params)) global->layout = Layout::NHWC;
    if (!device_runs(node, params, permute)) return false;
    std::vector<Tensor> inputs;
    for (std::size_t i = 0; i < node.inputs.size(); ++i)
      inputs.push_back(permute[i] ? channels_last(node.inputs[i]) : as_built(node.inputs[i]));
    const Tensor out = r_.add(node, params, inputs);
    if (permute_output) {
      nhwc_[index(node.output)] = out;
    } else {
      r_.replace(node.output, out);
    }
    return true;
  }

  // A batchnorm of a channels-last activation as x a + b, with a = scale / sqrt(var + eps) and
  // b = bias - mean a per channel, broadcast along the last axis: two passes over x against a
  // transpose to NCHW and one back around it (a training graph's statistics are computed tensors,
  // so there is no conv to fold it into).
  // (A channels-last tensor is 4-D, and the builder makes the batchnorm's other operands [C].)
  void scale_shift_channels_last(const Node& node) {
    Graph& g = r_.graph;
    const Tensor scale = as_built(node.inputs[1]), bias = as_built(node.inputs[2]);
    const Tensor mean = as_built(node.inputs[3]), var = as_built(node.inputs[4]);
    const std::string& n = node.name;
    const float epsilon = std::get<BatchNormParams>(node.params).epsilon;
    const Tensor eps = g.constant(fresh(n + ".epsilon"), {1}, std::vector<float>{epsilon});
    const Tensor a =
        g.div(scale, g.sqrt(g.add(var, eps, fresh(n + ".var_eps")), fresh(n + ".sqrt")), fresh(n + ".a"));
    const Tensor b = g.sub(bias, g.mul(mean, a, fresh(n + ".mean_a")), fresh(n + ".b"));
    const Shape last{1, 1, 1, g.shape(scale)[0]};
    const Tensor ax = g.mul(channels_last(node.inputs[0]), g.reshape(a, last, fresh(n + ".a.nhwc")), fresh(n + ".ax"));
    nhwc_[index(node.output)] = g.add(ax, g.reshape(b, last, fresh(n + ".b.nhwc")), n);  // the batchnorm's own
  }

  // Asks the device on a one-node graph whose operands have the shapes NHWC gives them.
  bool device_runs(const Node& node, const OpParams& params, const std::vector<bool>& permute) const {
    Graph empty;
    GraphRewriter trial(empty);
    std::vector<Tensor> inputs;
    try {
      for (std::size_t i = 0; i < node.inputs.size(); ++i) {
        const TensorInfo& info = graph_.info(node.inputs[i]);
        Shape shape = info.desc.shape;
        if (permute[i]) {
          shape.insert(shape.begin(), 4 - shape.size(), 1);
          shape = permuted(shape, nchw_to_nhwc);
        }
        const std::string name = "operand" + std::to_string(i);
        inputs.push_back(info.role == Role::Constant && !permute[i]
                             ? trial.graph.constant_bytes(name, shape, info.desc.dtype, info.data)
                             : trial.graph.input(name, shape, info.desc.dtype));
      }
      trial.add(node, params, inputs);
    } catch (const Error&) {
      return false;
    }
    return !device_ || device_->unsupported_reason(trial.graph, trial.graph.nodes().back(), options_).empty();
  }

  Tensor channels_last(Tensor t) {
    Tensor& now = nhwc_[index(t)];
    if (now) return now;
    const TensorInfo& info = graph_.info(t);
    Shape shape = info.desc.shape;
    shape.insert(shape.begin(), 4 - shape.size(), 1);
    const std::string name = fresh(info.name + ".nhwc");
    if (info.role == Role::Constant) {  // folded here, once
      now = r_.graph.constant_bytes(name, permuted(shape, nchw_to_nhwc), info.desc.dtype, channels_last_bytes(info));
    } else {
      now = r_.graph.transpose(as_built(t), {nchw_to_nhwc.begin(), nchw_to_nhwc.end()}, name);
    }
    return now;
  }

  Tensor as_built(Tensor t) {
    if (const Tensor now = r_.find(t)) return now;
    if (!nhwc_[index(t)]) return r_[t];  // a constant not used yet
    const Tensor now = r_.graph.transpose(nhwc_[index(t)], {nhwc_to_nchw.begin(), nhwc_to_nchw.end()},
                                          fresh(graph_.info(t).name + ".nchw"));
    r_.replace(t, now);
    return now;
  }

  static std::size_t index(Tensor t) { return static_cast<std::size_t>(t.id); }

  // `base`, or base#1, base#2 ... where a tensor of the graph (or one this pass made) has that name.
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; names_.contains(name); ++i) name = base + "#" + std::to_string(i);
    names_.insert(name);
    return name;
  }

  const Graph& graph_;
  const DeviceImpl* device_;
  const CompileOptions& options_;
  GraphRewriter r_;
  std::vector<Tensor> nhwc_;  // per source tensor: its channels-last form, where one was made
  std::unordered_set<std::string> names_;  // the source graph's and this pass's tensor names
};

}  // namespace

Graph assign_layouts(const Graph& graph, std::span<const std::int32_t> order, const DeviceImpl& device,
                     const CompileOptions& options) {
  LayoutAssigner assigner(graph, &device, options);
  if (!assigner.wanted(order)) return graph;
  return std::move(assigner).run(order);
}

Graph channels_last(const Graph& graph) {
  std::vector<std::int32_t> order(graph.nodes().size());
  std::iota(order.begin(), order.end(), 0);
  const CompileOptions options;
  LayoutAssigner assigner(graph, nullptr, options);
  if (!assigner.wanted(order)) return graph;
  return std::move(assigner).run(order);
}

}  // namespace porta::detail
