#include "core/compile/assignments.hpp"

#include <algorithm>

#include "core/compile/memory_plan.hpp"

namespace porta::detail {
namespace {

// Whether `value` may be computed in `variable`'s bytes: it is made by a node (step `at` of the
// order) after every other reader of the variable, and that node, if it reads the variable itself,
// reads each element before writing it. `taken`: values already written into another variable.
bool writable_in_place(const Graph& graph, std::span<const std::int32_t> order, const std::vector<std::int32_t>& step,
                       Tensor variable, Tensor value, const std::vector<bool>& taken) {
  const std::int32_t producer = graph.info(value).producer;
  if (producer < 0 || taken[static_cast<std::size_t>(value.id)]) return false;
  const std::int32_t at = step[static_cast<std::size_t>(producer)];
  for (const std::int32_t index : order) {
    const Node& node = graph.nodes()[static_cast<std::size_t>(index)];
    if (std::find(node.inputs.begin(), node.inputs.end(), variable) == node.inputs.end()) continue;
    if (index == producer ? !reads_before_writing(node.op) : step[static_cast<std::size_t>(index)] > at) return false;
  }
  return true;
}

}  // namespace

std::vector<VariableWrite> lower_assignments(Graph& graph, std::span<const std::int32_t> order) {
  std::vector<std::int32_t> step(graph.nodes().size(), -1);
  for (std::size_t i = 0; i < order.size(); ++i) step[static_cast<std::size_t>(order[i])] = static_cast<std::int32_t>(i);
  std::vector<bool> taken(graph.tensors().size(), false);
  std::vector<VariableWrite> writes;
  const auto assignments = graph.assignments();  // the copies below grow the graph
  for (const auto& [variable, value] : assignments) {
    Tensor written = value;
    if (!writable_in_place(graph, order, step, variable, value, taken))
      written = graph.reshape(value, graph.shape(value), graph.info(variable).name + "/assign");
    taken[static_cast<std::size_t>(value.id)] = true;
    writes.push_back({variable, written});
  }
  return writes;
}

}  // namespace porta::detail
