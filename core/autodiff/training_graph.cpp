// An inference graph made trainable: weights as variables, batchnorms on batch statistics, and optionally
// mixed precision (the network in bf16 or f16 around f32 master weights).
#include <algorithm>
#include <string>
#include <variant>

#include "core/compile/layout.hpp"
#include "core/compile/rewrite.hpp"
#include "core/runtime/dropout.hpp"
#include "porta/autodiff.hpp"
#include "porta/error.hpp"

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

void check_precision(DType precision) {
  if (precision != DType::f32 && precision != DType::bf16 && precision != DType::f16)
    throw Error(ErrorCode::InvalidArgument, "training_graph: precision " + std::string(to_string(precision)) +
                                                " is not a float dtype (f32, bf16 or f16)");
}

// A shard's dropout takes the rows of the whole batch's mask by its dim 0 (DropoutParams::batch_offset):
// x must lead with the batch, as the graph's inputs do. An x that does not (heads folded into the
// batch, a transpose) would draw other samples' rows without a word.
void check_leads_with_batch(const Graph& g, const Node& n) {
  const std::int64_t batch = g.inputs().empty() ? -1 : g.shape(g.inputs().front()).at(0);
  const Shape& x = g.shape(n.inputs[0]);
  if (x.empty() || x[0] != batch)
    throw Error(ErrorCode::Unsupported, "training_graph: batch_offset needs each dropout's x to lead with the batch (" +
                                            std::to_string(batch) + ", dim 0 of the first input), but dropout '" +
                                            n.name + "' has x " + to_string(x));
}

}  // namespace

TrainingGraph training_graph(const Graph& inference, const TrainingOptions& options) {
  const DType low = options.precision;
  check_precision(low);
  if (options.batch_offset < 0 || options.batch_offset > ::porta::detail::max_batch_offset)
    throw Error(ErrorCode::InvalidArgument, "training_graph: batch_offset " + std::to_string(options.batch_offset) +
                                                " is outside 0 .. 2^31 - 1 (the index of the graph's first sample "
                                                "in the batch)");
  const std::size_t count = inference.tensors().size();
  // Parameters are the float constants an output depends on: not integer ones (indices, shapes), nor
  // ones that only feed variables' updates (a step counter's increment), nor batchnorms' running statistics.
  std::vector<bool> read = feeding_outputs(inference), running_statistic(count, false);
  for (const Node& n : inference.nodes())
    if (n.op == OpKind::BatchNorm)
      for (const std::size_t slot : {3u, 4u}) running_statistic[static_cast<std::size_t>(n.inputs[slot].id)] = true;
  ::porta::detail::GraphRewriter r(inference);
  TrainingGraph out;
  std::vector<Tensor> master(count);  // the f32 tensor behind each tensor read in `low`: parameters, inputs
  for (std::size_t i = 0; i < count; ++i) {
    const TensorInfo& info = inference.tensors()[i];
    const Tensor old{static_cast<std::int32_t>(i)};
    if (info.role == Role::Input && info.desc.dtype == DType::f32 && low != DType::f32) {
      master[i] = r[old];
      r.replace(old, {});  // read through its cast, made at its first reader
    }
    if (info.role != Role::Constant || !is_float(info.desc.dtype) || !read[i] || running_statistic[i]) continue;
    out.params.push_back(r.graph.variable_bytes(info.name, info.desc.shape, info.desc.dtype, info.data));
    if (low == DType::f32) r.replace(old, out.params.back());
    else master[i] = out.params.back();
  }
  // The reads of a master tensor in `low`: cast down once, at the first node that reads it.
  const auto cast_down_inputs = [&](const Node& n) {
    for (const Tensor t : n.inputs) {
      const Tensor m = master[static_cast<std::size_t>(t.id)];
      if (m && !r.find(t)) r.replace(t, r.graph.dtype(m) == low ? m : r.graph.cast(m, low));
    }
  };
  const auto f32 = [&](Tensor old) {
    const Tensor m = master[static_cast<std::size_t>(old.id)];
    if (m && r.graph.dtype(m) == DType::f32) return m;
    const Tensor t = r[old];
    return r.graph.dtype(t) == DType::f32 ? t : r.graph.cast(t, DType::f32);
  };
  for (const Node& n : inference.nodes()) {
    if (n.op == OpKind::Cast && low != DType::f32 && std::get<CastParams>(n.params).to == DType::f32) {
      cast_down_inputs(n);
      r.replace(n.output, r.graph.cast(r[n.inputs[0]], low, n.name));
    } else if (n.op == OpKind::BatchNorm) {
      // Mixed precision runs it in f32: x cast up, the master scale and bias read as they are.
      const auto in = [&](std::size_t slot) { return low == DType::f32 ? r[n.inputs[slot]] : f32(n.inputs[slot]); };
      const float epsilon = std::get<BatchNormParams>(n.params).epsilon;
      const Tensor y = batchnorm_training(r.graph, in(0), in(1), in(2), epsilon).y;
      r.replace(n.output, low == DType::f32 ? y : r.graph.cast(y, low));
    } else if (n.op == OpKind::Dropout && options.batch_offset != 0) {
      check_leads_with_batch(inference, n);
      cast_down_inputs(n);
      DropoutParams p = std::get<DropoutParams>(n.params);
      p.batch_offset += options.batch_offset;
      r.replace(n.output, r.add(n, p, r.inputs(n)));
    } else {
      cast_down_inputs(n);
      r.copy(n);
    }
  }
  if (low != DType::f32)
    for (const auto& [name, t] : inference.outputs())
      if (is_float(inference.desc(t).dtype)) r.replace(t, f32(t));
  out.graph = std::move(r).finish();
  if (options.channels_last) {
    Graph moved = ::porta::detail::channels_last(out.graph);
    for (Tensor& param : out.params) {  // the same variables, in the rebuilt graph
      const std::string& name = out.graph.info(param).name;
      const auto& now = moved.variables();
      param = *std::find_if(now.begin(), now.end(), [&](Tensor v) { return moved.info(v).name == name; });
    }
    out.graph = std::move(moved);
  }
  return out;
}

}  // namespace porta::autodiff
