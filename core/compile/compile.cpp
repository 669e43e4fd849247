#include "core/compile/compile.hpp"

#include "core/compile/assignments.hpp"
#include "core/compile/decompose.hpp"
#include "core/compile/memory_plan.hpp"
#include "core/compile/optimize.hpp"
#include "core/graph/hash.hpp"
#include "porta/error.hpp"

namespace porta::detail {
namespace {

// Nodes that some output or a variable's new value depends on, in the order they were built
// (already topological: the builder only accepts operands that exist).
std::vector<std::int32_t> live_nodes_in_order(const Graph& graph, std::span<const VariableWrite> writes = {}) {
  std::vector<bool> needed(graph.tensors().size(), false);
  for (const auto& [name, t] : graph.outputs()) needed[static_cast<std::size_t>(t.id)] = true;
  for (const auto& [variable, value] : graph.assignments()) needed[static_cast<std::size_t>(value.id)] = true;
  for (const VariableWrite& w : writes) needed[static_cast<std::size_t>(w.value.id)] = true;
  std::vector<bool> keep(graph.nodes().size(), false);
  for (auto i = graph.nodes().size(); i-- > 0;) {
    const Node& node = graph.nodes()[i];
    if (!needed[static_cast<std::size_t>(node.output.id)]) continue;
    keep[i] = true;
    for (const Tensor in : node.inputs) needed[static_cast<std::size_t>(in.id)] = true;
  }
  std::vector<std::int32_t> order;
  for (std::size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) order.push_back(static_cast<std::int32_t>(i));
  return order;
}

}  // namespace

std::shared_ptr<const CompiledGraph> compile_graph(const Graph& graph, const DeviceImpl& device,
                                                   const CompileOptions& options) {
  if (graph.outputs().empty() && graph.assignments().empty())
    throw Error(ErrorCode::InvalidArgument,
                "the graph has no outputs: mark its results with Graph::output(name, tensor) or Graph::assign");

  // A composite op the device refuses is spelt out first: its parts may still run there.
  const std::optional<Graph> decomposed = decompose_refused(graph, live_nodes_in_order(graph), device, options);
  const Graph& source = decomposed ? *decomposed : graph;
  const std::vector<std::int32_t> order = live_nodes_in_order(source);
  std::string unsupported;
  int count = 0;
  for (const std::int32_t index : order) {
    const Node& node = source.nodes()[static_cast<std::size_t>(index)];
    const std::string reason = device.unsupported_reason(source, node, options);
    if (reason.empty()) continue;
    ++count;
    unsupported += "\n  " + std::string(to_string(node.op)) + " '" + node.name + "': " + reason;
  }
  if (count > 0)
    throw Error(ErrorCode::Unsupported, "device " + device.info().spec + " cannot run " + std::to_string(count) +
                                            " node(s) of this graph:" + unsupported);

  auto compiled = std::make_shared<CompiledGraph>();
  compiled->options = options;
  // Fused nodes are only formed where the device accepts them, so the check above still holds.
  compiled->graph = options.optimize ? optimize(source, order, device, options) : source;
  compiled->writes = lower_assignments(compiled->graph, live_nodes_in_order(compiled->graph));
  compiled->order = live_nodes_in_order(compiled->graph, compiled->writes);
  compiled->plan = plan_memory(compiled->graph, compiled->order, device.alignment(), options.optimize, compiled->writes);
  compiled->hash = structural_hash(compiled->graph, compiled->order);
  return compiled;
}

}  // namespace porta::detail
