#include "backward.hpp"

#include "porta/autodiff.hpp"
#include "porta/error.hpp"

namespace porta::cli {

Backward append_backward(Graph& graph) {
  Backward result;
  std::vector<Tensor> wrt;
  for (std::size_t i = 0; i < graph.tensors().size(); ++i) {
    const TensorInfo& info = graph.tensors()[i];
    if (info.role != Role::Input && info.role != Role::Constant) continue;
    if (is_float(info.desc.dtype))
      wrt.push_back(Tensor{static_cast<std::int32_t>(i)});
    else
      result.skipped.push_back({info.name, info.desc.dtype, false});
  }
  Tensor total;
  const auto outputs = graph.outputs();  // the gradients below become outputs too
  for (const auto& [name, t] : outputs) {
    if (!is_float(graph.dtype(t))) {
      result.skipped.push_back({name, graph.dtype(t), true});
      continue;
    }
    result.seeded.push_back(name);
    const Tensor seeded = graph.mul(t, graph.input(seed_name(name), graph.shape(t), graph.dtype(t)));
    const Tensor sum = graph.reduce(seeded, {.op = Reduction::Sum, .axes = {}, .keepdims = false});  // [1]
    total = total ? graph.add(total, sum) : sum;
  }
  if (!total) throw Error(ErrorCode::InvalidArgument, "--backward: the model has no float output to differentiate");
  const std::vector<Tensor> grads = autodiff::gradients(graph, total, wrt);
  for (std::size_t i = 0; i < grads.size(); ++i) graph.output(graph.info(wrt[i]).name + ".grad", grads[i]);
  return result;
}

}  // namespace porta::cli
