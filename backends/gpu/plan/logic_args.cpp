// Kernel arguments of the comparisons, logical ops and where (ops/logic.cu).
#include <variant>

#include "backends/gpu/plan/op_args.hpp"

namespace porta::detail::gpu {
namespace {

IndexMap operand_map(const Graph& graph, const Node& node, Tensor operand) {
  return broadcast_map(graph.shape(operand), graph.shape(node.output));
}

template <class Params> auto bool_result_args(const Graph& graph, const Node& node) {
  return BoolResultArgs<decltype(Params{}.op)>{
      .op = std::get<Params>(node.params).op, .dtype = graph.dtype(node.inputs[0]),
      .count = graph.desc(node.output).numel(), .a = operand_map(graph, node, node.inputs[0]),
      .b = operand_map(graph, node, node.inputs.back())};  // not's b: a again, never read
}

}  // namespace

CompareArgs compare_args(const Graph& graph, const Node& node) { return bool_result_args<CompareParams>(graph, node); }

LogicalArgs logical_args(const Graph& graph, const Node& node) { return bool_result_args<LogicalParams>(graph, node); }

WhereArgs where_args(const Graph& graph, const Node& node) {
  return {.element_bytes = static_cast<int>(size_of(graph.dtype(node.output))),
          .count = graph.desc(node.output).numel(),
          .cond = operand_map(graph, node, node.inputs[0]), .x = operand_map(graph, node, node.inputs[1]),
          .other = operand_map(graph, node, node.inputs[2])};
}

}  // namespace porta::detail::gpu
