#include "core/compile/optimize.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <variant>
#include <vector>

#include "core/compile/layout.hpp"
#include "core/compile/rewrite.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

constexpr std::int32_t none = -1;

// Who reads each tensor: the one consuming node among `order`, or none when there are zero or
// several consumers or the tensor is a graph output or a variable's new value (then it must stay
// materialised).
std::vector<std::int32_t> sole_consumers(const Graph& graph, std::span<const std::int32_t> order) {
  constexpr std::int32_t many = -2;
  std::vector<std::int32_t> consumer(graph.tensors().size(), none);
  for (const std::int32_t index : order)
    for (const Tensor t : graph.nodes()[static_cast<std::size_t>(index)].inputs) {
      std::int32_t& c = consumer[static_cast<std::size_t>(t.id)];
      c = c == none ? index : many;
    }
  for (const auto& [name, t] : graph.outputs()) consumer[static_cast<std::size_t>(t.id)] = many;
  for (const auto& [variable, value] : graph.assignments()) consumer[static_cast<std::size_t>(value.id)] = many;
  for (std::int32_t& c : consumer)
    if (c == many) c = none;
  return consumer;
}

bool is_constant(const Graph& graph, Tensor t) { return graph.info(t).role == Role::Constant; }

// The epilogue activation an elementwise node can become, if any.
std::optional<Activation> as_activation(const Node& node) {
  static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
  switch (node.op) {
    case OpKind::Relu: return Activation::Relu;
    case OpKind::Sigmoid: return Activation::Sigmoid;
    case OpKind::Silu: return Activation::Silu;
    case OpKind::Tanh: return Activation::Tanh;
    case OpKind::Gelu:
      if (!std::get<GeluParams>(node.params).tanh_approximation) return Activation::Gelu;
      return std::nullopt;
    case OpKind::Clip: {
      const auto& p = std::get<ClipParams>(node.params);
      if (p.min == 0.0f && p.max == 6.0f) return Activation::Relu6;
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

Activation& activation_of(OpParams& params) {
  if (auto* conv = std::get_if<Conv2dParams>(&params)) return conv->activation;
  return std::get<GemmParams>(params).activation;
}

// mul(x, sigmoid(x)) -> silu(x), when nothing else reads the sigmoid.
Graph fuse_silu(const Graph& graph, std::span<const std::int32_t> order) {
  const auto consumer = sole_consumers(graph, order);
  const auto sigmoid_of = [&](Tensor s, Tensor x, std::int32_t mul) {
    const std::int32_t producer = graph.info(s).producer;
    if (producer < 0 || consumer[static_cast<std::size_t>(s.id)] != mul) return false;
    const Node& n = graph.nodes()[static_cast<std::size_t>(producer)];
    return n.op == OpKind::Sigmoid && n.inputs[0] == x;
  };
  std::vector<bool> gone(graph.nodes().size(), false);
  std::vector<std::optional<Tensor>> silu_input(graph.nodes().size());
  for (const std::int32_t index : order) {
    const Node& n = graph.nodes()[static_cast<std::size_t>(index)];
    if (n.op != OpKind::Mul) continue;
    for (int side = 0; side < 2; ++side) {
      const Tensor x = n.inputs[static_cast<std::size_t>(side)], s = n.inputs[static_cast<std::size_t>(1 - side)];
      if (!sigmoid_of(s, x, index)) continue;
      gone[static_cast<std::size_t>(graph.info(s).producer)] = true;
      silu_input[static_cast<std::size_t>(index)] = x;
      break;
    }
  }
  GraphRewriter r(graph);
  for (const std::int32_t index : order) {
    const Node& n = graph.nodes()[static_cast<std::size_t>(index)];
    if (gone[static_cast<std::size_t>(index)]) continue;
    if (const auto& x = silu_input[static_cast<std::size_t>(index)]) {
      r.replace(n.output, r.graph.silu(r[*x], n.name));
    } else {
      r.copy(n);
    }
  }
  return std::move(r).finish();
}

// GELU as exporters spell it, 0.5 x (1 + erf(x / sqrt 2)) in any order of its products (PyTorch:
// (x * 0.5) * (1 + erf), or x * (1 + erf) * 0.5; x / sqrt 2 also as x * (1 / sqrt 2)) -> gelu(x),
// when nothing else reads its steps: one pass over x, not five.
Graph fuse_gelu(const Graph& graph, std::span<const std::int32_t> order) {
  const auto consumer = sole_consumers(graph, order);
  const auto node_of = [&](Tensor t) { return &graph.nodes()[static_cast<std::size_t>(graph.info(t).producer)]; };
  // The node making `t` when `reader` alone reads it and it is `op`, else null.
  const auto step = [&](Tensor t, std::int32_t reader, OpKind op) -> const Node* {
    const std::int32_t producer = graph.info(t).producer;
    if (producer < 0 || consumer[static_cast<std::size_t>(t.id)] != reader || node_of(t)->op != op) return nullptr;
    return node_of(t);
  };
  // The constant `value` as its dtype rounds it: f16 holds sqrt 2 to 1e-4, bf16 to 1e-3.
  const auto is_scalar = [&](Tensor t, double value) {
    const TensorInfo& info = graph.info(t);
    if (!is_constant(graph, t) || info.desc.numel() != 1 || !is_float(info.desc.dtype)) return false;
    const double spacing = info.desc.dtype == DType::f16 ? 0x1p-11 : info.desc.dtype == DType::bf16 ? 0x1p-8 : 1e-6;
    return std::fabs(load_as_f32(info.data->data(), 0, info.desc.dtype) - value) <= spacing * value;
  };
  // The two operands of a binary node, the one that is the scalar `value` second; nullopt if neither is.
  const auto with_scalar = [&](const Node& n, double value) -> std::optional<std::pair<Tensor, Tensor>> {
    for (int side = 0; side < 2; ++side)
      if (is_scalar(n.inputs[static_cast<std::size_t>(1 - side)], value))
        return std::pair{n.inputs[static_cast<std::size_t>(side)], n.inputs[static_cast<std::size_t>(1 - side)]};
    return std::nullopt;
  };
  // Whether `g` is 1 + erf(x / sqrt 2), read only by `reader`; its nodes go into `steps`.
  const auto one_plus_erf = [&](Tensor g, Tensor x, std::int32_t reader, std::vector<std::int32_t>& steps) {
    const Node* add = step(g, reader, OpKind::Add);
    const auto erf_side = add ? with_scalar(*add, 1.0) : std::nullopt;
    const Node* erf = erf_side ? step(erf_side->first, graph.info(g).producer, OpKind::Erf) : nullptr;
    if (erf == nullptr) return false;
    const std::int32_t erf_index = graph.info(erf_side->first).producer;
    const Tensor scaled = erf->inputs[0];
    const Node* div = step(scaled, erf_index, OpKind::Div);
    const Node* mul = step(scaled, erf_index, OpKind::Mul);
    const bool by_div = div && div->inputs[0] == x && is_scalar(div->inputs[1], std::numbers::sqrt2);
    const auto by_mul = mul ? with_scalar(*mul, 1.0 / std::numbers::sqrt2) : std::nullopt;
    if (!by_div && !(by_mul && by_mul->first == x)) return false;
    steps.insert(steps.end(), {graph.info(g).producer, erf_index, graph.info(scaled).producer});
    return true;
  };
  std::vector<bool> gone(graph.nodes().size(), false);
  std::vector<std::optional<Tensor>> gelu_input(graph.nodes().size());
  for (const std::int32_t index : order) {
    const Node& n = graph.nodes()[static_cast<std::size_t>(index)];
    if (n.op != OpKind::Mul) continue;
    std::vector<std::int32_t> steps;
    std::optional<Tensor> x;
    for (int side = 0; side < 2 && !x; ++side) {
      const Tensor a = n.inputs[static_cast<std::size_t>(side)], b = n.inputs[static_cast<std::size_t>(1 - side)];
      steps.clear();
      if (const Node* half = step(a, index, OpKind::Mul)) {  // (x * 0.5) * (1 + erf)
        const auto operands = with_scalar(*half, 0.5);
        if (operands && one_plus_erf(b, operands->first, index, steps)) {
          steps.push_back(graph.info(a).producer);
          x = operands->first;
          continue;
        }
      }
      steps.clear();
      if (const Node* product = is_scalar(b, 0.5) ? step(a, index, OpKind::Mul) : nullptr) {  // (x * (1 + erf)) * 0.5
        for (int inner = 0; inner < 2 && !x; ++inner) {
          const Tensor candidate = product->inputs[static_cast<std::size_t>(inner)];
          steps.clear();
          if (one_plus_erf(product->inputs[static_cast<std::size_t>(1 - inner)], candidate, graph.info(a).producer, steps)) {
            steps.push_back(graph.info(a).producer);
            x = candidate;
          }
        }
      }
    }
    if (!x || graph.info(*x).desc.shape != graph.info(n.output).desc.shape ||
        graph.info(*x).desc.dtype != graph.info(n.output).desc.dtype)
      continue;
    for (const std::int32_t s : steps) gone[static_cast<std::size_t>(s)] = true;
    gelu_input[static_cast<std::size_t>(index)] = x;
  }
  GraphRewriter r(graph);
  for (const std::int32_t index : order) {
    const Node& n = graph.nodes()[static_cast<std::size_t>(index)];
    if (gone[static_cast<std::size_t>(index)]) continue;
    if (const auto& x = gelu_input[static_cast<std::size_t>(index)]) {
      r.replace(n.output, r.graph.gelu(r[*x], {}, n.name));
    } else {
      r.copy(n);
    }
  }
  return std::move(r).finish();
}

// A conv or gemm with the nodes that fold or fuse into it. It is emitted where its last absorbed
// node was, so that a residual made after the conv already exists.
struct Chain {
  std::int32_t head = none;
  OpParams params;
  std::vector<std::int32_t> batchnorms;  // folded, in order
  std::optional<Tensor> residual;
  Tensor end;                            // the source tensor the fused node replaces
};

// Weights and bias of `conv` with `bns` folded in: w' = w * s, b' = (b - mean) * s + beta, with
// s = scale / sqrt(var + eps) per filter.
std::pair<Tensor, Tensor> fold_batchnorms(const Graph& graph, const Node& conv, std::span<const std::int32_t> bns,
                                          GraphRewriter& r) {
  const TensorInfo& w = graph.info(conv.inputs[1]);
  const std::int64_t filters = w.desc.shape[0], per_filter = w.desc.numel() / filters;
  const int bias_slot = conv_slots(conv).bias;
  std::vector<double> scale(static_cast<std::size_t>(filters), 1.0), shift(static_cast<std::size_t>(filters), 0.0);
  if (bias_slot >= 0) {
    const TensorInfo& b = graph.info(conv.inputs[static_cast<std::size_t>(bias_slot)]);
    for (std::int64_t k = 0; k < filters; ++k) shift[k] = load_as_f32(b.data->data(), k, b.desc.dtype);
  }
  for (const std::int32_t index : bns) {
    const Node& bn = graph.nodes()[static_cast<std::size_t>(index)];
    const double eps = std::get<BatchNormParams>(bn.params).epsilon;
    const auto value = [&](int input, std::int64_t k) {
      const TensorInfo& t = graph.info(bn.inputs[static_cast<std::size_t>(input)]);
      return double{load_as_f32(t.data->data(), static_cast<std::size_t>(k), t.desc.dtype)};
    };
    for (std::int64_t k = 0; k < filters; ++k) {
      const double s = value(1, k) / std::sqrt(value(4, k) + eps);
      scale[k] *= s;
      shift[k] = (shift[k] - value(3, k)) * s + value(2, k);
    }
  }
  std::vector<float> weights(static_cast<std::size_t>(w.desc.numel())), bias(static_cast<std::size_t>(filters));
  for (std::int64_t i = 0; i < w.desc.numel(); ++i)
    weights[i] = static_cast<float>(load_as_f32(w.data->data(), i, w.desc.dtype) * scale[i / per_filter]);
  for (std::int64_t k = 0; k < filters; ++k) bias[k] = static_cast<float>(shift[k]);
  const DType t = w.desc.dtype;
  return {r.graph.constant(conv.name + ".folded_weight", w.desc.shape, weights, t),
          r.graph.constant(conv.name + ".folded_bias", {filters}, bias, t)};
}

class EpilogueFuser {
 public:
  EpilogueFuser(const Graph& graph, std::span<const std::int32_t> order, const DeviceImpl& device,
                const CompileOptions& options)
      : graph_(graph), order_(order), device_(device), options_(options), consumer_(sole_consumers(graph, order)),
        chain_at_(graph.nodes().size(), none), absorbed_(graph.nodes().size(), false) {}

  Graph run() {
    for (const std::int32_t index : order_) {
      const Node& n = graph_.nodes()[static_cast<std::size_t>(index)];
      if (absorbed_[static_cast<std::size_t>(index)] || (n.op != OpKind::Conv2d && n.op != OpKind::Gemm)) continue;
      grow(index);
    }
    GraphRewriter r(graph_);
    for (const std::int32_t index : order_) {
      if (const std::int32_t c = chain_at_[static_cast<std::size_t>(index)]; c != none) {
        emit(chains_[static_cast<std::size_t>(c)], r);
      } else if (!absorbed_[static_cast<std::size_t>(index)]) {
        r.copy(graph_.nodes()[static_cast<std::size_t>(index)]);
      }
    }
    return std::move(r).finish();
  }

 private:
  const Node& node(std::int32_t index) const { return graph_.nodes()[static_cast<std::size_t>(index)]; }

  void grow(std::int32_t head) {
    const Node& h = node(head);
    Chain chain;
    chain.head = head, chain.params = h.params, chain.end = h.output;
    // A conv built with a residual input keeps it, and no add can fuse as a second one.
    if (h.op == OpKind::Conv2d)
      if (const int residual = conv_slots(h).residual; residual >= 0) chain.residual = h.inputs[static_cast<std::size_t>(residual)];
    std::int32_t last = head;
    for (std::int32_t next; (next = consumer_[static_cast<std::size_t>(chain.end.id)]) != none;) {
      const Node& n = node(next);
      if (absorbed_[static_cast<std::size_t>(next)] || !absorb(chain, n)) break;  // taken by an earlier chain
      absorbed_[static_cast<std::size_t>(next)] = true;
      chain.end = n.output;
      last = next;
    }
    if (last == head) return;
    absorbed_[static_cast<std::size_t>(head)] = true;
    chain_at_[static_cast<std::size_t>(last)] = static_cast<std::int32_t>(chains_.size());
    chains_.push_back(std::move(chain));
  }

  bool absorb(Chain& chain, const Node& n) {
    const Node& head = node(chain.head);
    Activation& act = activation_of(chain.params);
    if (act != Activation::None) return false;  // everything else applies before the activation
    const bool conv = head.op == OpKind::Conv2d;
    if (conv && n.op == OpKind::BatchNorm && !chain.residual && n.inputs[0] == chain.end && foldable(head, n)) {
      chain.batchnorms.push_back(index_of(n));
      return true;
    }
    if (conv && n.op == OpKind::Add && !chain.residual) {
      const Tensor other = n.inputs[0] == chain.end ? n.inputs[1] : n.inputs[0];
      if (other == chain.end || graph_.desc(other) != graph_.desc(chain.end)) return false;
      Chain trial = chain;
      trial.residual = other;
      std::get<Conv2dParams>(trial.params).residual = true;
      if (!accepted(trial)) return false;
      chain = std::move(trial);
      return true;
    }
    if (const auto a = as_activation(n)) {
      Chain trial = chain;
      activation_of(trial.params) = *a;
      if (!accepted(trial)) return false;
      chain = std::move(trial);
      return true;
    }
    return false;
  }

  bool foldable(const Node& conv, const Node& bn) const {
    const int bias = conv_slots(conv).bias;
    // Batchnorm normalises dimension 1: the channels of an NCHW conv only.
    const auto& p = std::get<Conv2dParams>(conv.params);
    return p.activation == Activation::None && p.layout == Layout::NCHW && is_constant(graph_, conv.inputs[1]) &&
           (bias < 0 || is_constant(graph_, conv.inputs[static_cast<std::size_t>(bias)])) &&
           std::all_of(bn.inputs.begin() + 1, bn.inputs.end(), [&](Tensor t) { return is_constant(graph_, t); });
  }

  std::int32_t index_of(const Node& n) const { return static_cast<std::int32_t>(&n - graph_.nodes().data()); }

  // Asks the device whether it runs the fused node, described with the source graph's tensors
  // (a folded bias is stood in for by the batchnorm's bias: same shape and dtype).
  bool accepted(const Chain& chain) const {
    const Node& head = node(chain.head);
    Node fused{head.name, head.op, chain.params, {head.inputs[0], head.inputs[1]}, chain.end};
    if (head.op == OpKind::Gemm) {
      fused.inputs = head.inputs;
    } else {
      if (const int bias = conv_slots(head).bias; bias >= 0) {
        fused.inputs.push_back(head.inputs[static_cast<std::size_t>(bias)]);
      } else if (!chain.batchnorms.empty()) {
        fused.inputs.push_back(node(chain.batchnorms.front()).inputs[2]);
      }
      if (chain.residual) fused.inputs.push_back(*chain.residual);
    }
    return device_.unsupported_reason(graph_, fused, options_).empty();
  }

  void emit(const Chain& chain, GraphRewriter& r) const {
    const Node& head = node(chain.head);
    std::vector<Tensor> inputs;
    if (head.op == OpKind::Gemm) {
      for (const Tensor t : head.inputs) inputs.push_back(r[t]);
    } else {
      const int bias = conv_slots(head).bias;
      if (!chain.batchnorms.empty()) {
        const auto [w, b] = fold_batchnorms(graph_, head, chain.batchnorms, r);
        inputs = {r[head.inputs[0]], w, b};
      } else {
        inputs = {r[head.inputs[0]], r[head.inputs[1]]};
        if (bias >= 0) inputs.push_back(r[head.inputs[static_cast<std::size_t>(bias)]]);
      }
      if (chain.residual) inputs.push_back(r[*chain.residual]);
    }
    r.replace(chain.end, r.add(head, chain.params, inputs));
  }

  const Graph& graph_;
  std::span<const std::int32_t> order_;
  const DeviceImpl& device_;
  const CompileOptions& options_;
  std::vector<std::int32_t> consumer_;
  std::vector<std::int32_t> chain_at_;  // node index -> chain emitted in its place
  std::vector<bool> absorbed_;
  std::vector<Chain> chains_;
};

std::vector<std::int32_t> all_nodes(const Graph& graph) {
  std::vector<std::int32_t> order(graph.nodes().size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int32_t>(i);
  return order;
}

}  // namespace

Graph optimize(const Graph& graph, std::span<const std::int32_t> order, const DeviceImpl& device,
               const CompileOptions& options) {
  const Graph silu = fuse_silu(graph, order);
  const Graph canonical = fuse_gelu(silu, all_nodes(silu));
  const Graph fused = EpilogueFuser(canonical, all_nodes(canonical), device, options).run();
  return assign_layouts(fused, all_nodes(fused), device, options);
}

}  // namespace porta::detail
