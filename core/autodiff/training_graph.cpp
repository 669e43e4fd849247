// An inference graph made trainable: weights as variables, batchnorms on batch statistics.
#include <variant>

#include "core/compile/rewrite.hpp"
#include "porta/autodiff.hpp"

namespace porta::autodiff {

namespace {

// Which tensors the graph's outputs depend on: nodes come in topological order, so one pass from the
// last node back marks each producer's inputs once its output is marked.
std::vector<bool> feeding_outputs(const Graph& g) {
  std::vector<bool> needed(g.tensors().size(), false);
  for (const auto& [name, t] : g.outputs()) needed[static_cast<std::size_t>(t.id)] = true;
  for (auto n = g.nodes().rbegin(); n != g.nodes().rend(); ++n)
    if (needed[static_cast<std::size_t>(n->output.id)])
      for (const Tensor t : n->inputs) needed[static_cast<std::size_t>(t.id)] = true;
  return needed;
}

}  // namespace

TrainingGraph training_graph(const Graph& inference) {
  const std::size_t count = inference.tensors().size();
  // Parameters are the float constants an output depends on: not integer ones (indices, shapes), nor
  // ones that only feed variables' updates (a step counter's increment), nor batchnorms' running statistics.
  std::vector<bool> read = feeding_outputs(inference), running_statistic(count, false);
  for (const Node& n : inference.nodes())
    if (n.op == OpKind::BatchNorm)
      for (const std::size_t slot : {3u, 4u}) running_statistic[static_cast<std::size_t>(n.inputs[slot].id)] = true;
  ::porta::detail::GraphRewriter r(inference);
  TrainingGraph out;
  for (std::size_t i = 0; i < count; ++i) {
    const TensorInfo& info = inference.tensors()[i];
    if (info.role != Role::Constant || !is_float(info.desc.dtype) || !read[i] || running_statistic[i]) continue;
    out.params.push_back(r.graph.variable_bytes(info.name, info.desc.shape, info.desc.dtype, info.data));
    r.replace(Tensor{static_cast<std::int32_t>(i)}, out.params.back());
  }
  for (const Node& n : inference.nodes()) {
    if (n.op != OpKind::BatchNorm) {
      r.copy(n);
      continue;
    }
    const float epsilon = std::get<BatchNormParams>(n.params).epsilon;
    r.replace(n.output, batchnorm_training(r.graph, r[n.inputs[0]], r[n.inputs[1]], r[n.inputs[2]], epsilon).y);
  }
  out.graph = std::move(r).finish();
  return out;
}

}  // namespace porta::autodiff
