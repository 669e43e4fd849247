// An inference graph made trainable: weights as variables, batchnorms on batch statistics.
#include <variant>

#include "core/compile/rewrite.hpp"
#include "porta/autodiff.hpp"

namespace porta::autodiff {

TrainingGraph training_graph(const Graph& inference) {
  const std::size_t count = inference.tensors().size();
  std::vector<bool> read(count, false), running_statistic(count, false);
  for (const Node& n : inference.nodes()) {
    for (const Tensor t : n.inputs) read[static_cast<std::size_t>(t.id)] = true;
    if (n.op == OpKind::BatchNorm)
      for (const std::size_t slot : {3u, 4u}) running_statistic[static_cast<std::size_t>(n.inputs[slot].id)] = true;
  }
  ::porta::detail::GraphRewriter r(inference);
  TrainingGraph out;
  for (std::size_t i = 0; i < count; ++i) {
    const TensorInfo& info = inference.tensors()[i];
    if (info.role != Role::Constant || !read[i] || running_statistic[i]) continue;
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
