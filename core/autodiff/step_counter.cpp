// autodiff::step_counter: the step a graph's dropout nodes read, incremented by each run.
#include "core/autodiff/graph_math.hpp"
#include "porta/autodiff.hpp"

namespace porta::autodiff {

Tensor step_counter(Graph& graph, std::string name) {
  const Tensor count = graph.variable(std::move(name), {1});
  graph.assign(count, graph.add(count, detail::filled(graph, {1}, 1.0f, DType::f32)));
  return count;
}

}  // namespace porta::autodiff
