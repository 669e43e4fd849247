#include "core/graph/hash.hpp"

#include <type_traits>

namespace porta::detail {
namespace {

class Fnv1a {
 public:
  template <class T>
    requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void add(T value) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(&value);
    for (std::size_t i = 0; i < sizeof(T); ++i) hash_ = (hash_ ^ bytes[i]) * 0x100000001b3ull;
  }
  template <class T, std::size_t N>
  void add(const std::array<T, N>& values) {
    for (const T& v : values) add(v);
  }
  void add(const std::vector<std::int64_t>& values) {
    add(values.size());
    for (auto v : values) add(v);
  }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ull;
};

void add_params(Fnv1a&, std::monostate) {}
void add_params(Fnv1a& h, const MatMulParams& p) { h.add(p.trans_a), h.add(p.trans_b); }
void add_params(Fnv1a& h, const GemmParams& p) {
  h.add(p.trans_a), h.add(p.trans_b), h.add(p.alpha), h.add(p.beta), h.add(p.activation);
}
void add_params(Fnv1a& h, const Conv2dParams& p) {
  h.add(p.stride), h.add(p.pad), h.add(p.dilation), h.add(p.groups), h.add(p.activation), h.add(p.residual), h.add(p.layout);
}
void add_params(Fnv1a& h, const ClipParams& p) { h.add(p.min), h.add(p.max); }
void add_params(Fnv1a& h, const GeluParams& p) { h.add(p.tanh_approximation); }
void add_params(Fnv1a& h, const BatchNormParams& p) { h.add(p.epsilon); }
void add_params(Fnv1a& h, const Pool2dParams& p) {
  h.add(p.kernel), h.add(p.stride), h.add(p.pad), h.add(p.dilation), h.add(p.ceil_mode), h.add(p.count_include_pad);
  h.add(p.layout);
}
void add_params(Fnv1a& h, const GlobalPoolParams& p) { h.add(p.layout); }
void add_params(Fnv1a& h, const SoftmaxParams& p) { h.add(p.axis); }
void add_params(Fnv1a& h, const ReshapeParams& p) { h.add(p.shape); }
void add_params(Fnv1a& h, const TransposeParams& p) { h.add(p.perm); }
void add_params(Fnv1a& h, const ConcatParams& p) { h.add(p.axis); }
void add_params(Fnv1a& h, const CastParams& p) { h.add(p.to); }
void add_params(Fnv1a& h, const HardSigmoidParams& p) { h.add(p.alpha), h.add(p.beta); }
void add_params(Fnv1a& h, const NormParams& p) { h.add(p.axis), h.add(p.epsilon); }
void add_params(Fnv1a& h, const ReduceParams& p) { h.add(p.op), h.add(p.axes), h.add(p.keepdims); }
void add_params(Fnv1a& h, const SliceParams& p) { h.add(p.starts), h.add(p.ends), h.add(p.axes), h.add(p.steps); }
void add_params(Fnv1a& h, const PadParams& p) { h.add(p.pads), h.add(p.mode), h.add(p.value); }
void add_params(Fnv1a& h, const ExpandParams& p) { h.add(p.shape); }
void add_params(Fnv1a& h, const GatherParams& p) { h.add(p.axis); }
void add_params(Fnv1a& h, const CompareParams& p) { h.add(p.op); }
void add_params(Fnv1a& h, const LogicalParams& p) { h.add(p.op); }
void add_params(Fnv1a& h, const ActivationBackwardParams& p) {
  h.add(p.activation), add_params(h, p.clip), add_params(h, p.gelu), add_params(h, p.hard_sigmoid);
}
void add_params(Fnv1a& h, const AttentionParams& p) { h.add(p.scale), h.add(p.causal); }
void add_params(Fnv1a& h, const DropoutParams& p) {
  h.add(p.ratio), h.add(p.seed), h.add(p.mask_dims), h.add(p.batch_offset);
}

void add_tensor(Fnv1a& h, const TensorInfo& t) {
  h.add(t.role), h.add(t.desc.dtype), h.add(t.desc.shape), h.add(t.input_strides);
}

}  // namespace

std::uint64_t structural_hash(const Graph& graph, std::span<const std::int32_t> order) {
  Fnv1a h;
  for (const std::int32_t index : order) {
    const Node& node = graph.nodes()[static_cast<std::size_t>(index)];
    h.add(node.op);
    std::visit([&](const auto& p) { add_params(h, p); }, node.params);
    h.add(node.inputs.size());
    for (const Tensor in : node.inputs) {
      h.add(in.id);
      add_tensor(h, graph.info(in));
    }
    h.add(node.output.id);
    add_tensor(h, graph.info(node.output));
  }
  for (const auto& [name, t] : graph.outputs()) h.add(t.id);
  // Which value each variable takes after the run is part of the computation: two graphs that
  // differ only there must not share an executable.
  for (const auto& [variable, value] : graph.assignments()) {
    h.add(variable.id);
    add_tensor(h, graph.info(variable));
    h.add(value.id);
  }
  return h.value();
}

}  // namespace porta::detail
