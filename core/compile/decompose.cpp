#include "core/compile/decompose.hpp"

#include <limits>
#include <string>
#include <vector>

#include "core/compile/rewrite.hpp"

namespace porta::detail {
namespace {

// softmax(scale * q kᵀ + mask, with -inf above the diagonal where causal) v, as the op defines it;
// the last node keeps the attention node's name.
Tensor attention_composition(Graph& g, const Node& node, std::span<const Tensor> in) {
  const auto& p = std::get<AttentionParams>(node.params);
  const DType dtype = g.dtype(in[0]);
  const std::string& name = node.name;
  const Tensor scale = g.constant(name + "/scale", {1}, std::vector<float>{p.scale}, dtype);
  Tensor scores = g.mul(g.matmul(in[0], in[1], {.trans_b = true}, name + "/scores"), scale, name + "/scaled");
  if (in.size() > 3) scores = g.add(scores, in[3], name + "/masked");
  if (p.causal) {
    const std::int64_t queries = g.shape(in[0])[2], keys = g.shape(in[1])[2];
    std::vector<float> hidden(static_cast<std::size_t>(queries * keys), 0.0f);
    for (std::int64_t i = 0; i < queries; ++i)
      for (std::int64_t j = i + 1; j < keys; ++j)
        hidden[static_cast<std::size_t>(i * keys + j)] = -std::numeric_limits<float>::infinity();
    scores = g.add(scores, g.constant(name + "/causal_mask", {queries, keys}, hidden, dtype), name + "/causal");
  }
  return g.matmul(g.softmax(scores, -1, name + "/weights"), in[2], {}, name);
}

}  // namespace

std::optional<Graph> decompose_refused(const Graph& graph, std::span<const std::int32_t> order,
                                       const DeviceImpl& device, const CompileOptions& options) {
  std::vector<bool> refused(graph.nodes().size(), false);
  bool any = false;
  for (const std::int32_t index : order) {
    const Node& node = graph.nodes()[static_cast<std::size_t>(index)];
    if (node.op != OpKind::Attention || device.unsupported_reason(graph, node, options).empty()) continue;
    refused[static_cast<std::size_t>(index)] = any = true;
  }
  if (!any) return std::nullopt;
  GraphRewriter r(graph);
  r.copy_except(refused, [&](std::size_t, const Node& node) {
    r.replace(node.output, attention_composition(r.graph, node, r.inputs(node)));
  });
  return std::move(r).finish();
}

}  // namespace porta::detail
