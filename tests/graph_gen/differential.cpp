#include "graph_gen/differential.hpp"

#include <algorithm>
#include <cmath>

#include "core/compile/rewrite.hpp"
#include "graph_gen/shrink.hpp"

namespace porta::graph_gen {
namespace {

using Values = std::vector<std::vector<float>>;  // per input or output, in the graph's order

Values run(const Device& device, const Graph& graph, bool optimize, const Values& inputs) {
  Executable exe = device.compile(graph, {.poison_memory = true, .optimize = optimize});
  const std::vector<Tensor> names = graph.inputs();
  for (std::size_t i = 0; i < names.size(); ++i) exe.set_input(graph.info(names[i]).name, inputs[i]);
  exe.run();
  Values outputs;
  for (const auto& [name, t] : graph.outputs()) outputs.push_back(exe.output(name));
  return outputs;
}

std::string describe(const Error& e) { return "threw " + std::string(to_string(e.code())) + ": " + e.what(); }

bool narrowing_cast(const Graph& graph, const Node& node) {
  return node.op == OpKind::Cast && size_of(graph.dtype(node.output)) < size_of(graph.dtype(node.inputs[0]));
}

// Each value x of an input or constant becomes x (1 + p u), u uniform in [-1, 1): an NMSE of p^2 / 3.
constexpr double perturbation = 1.0 / 32;

void perturb(std::vector<float>& values, std::uint64_t seed) {
  const std::vector<float> u = cases::random_values(values.size(), seed);
  for (std::size_t j = 0; j < u.size(); ++j) values[j] *= static_cast<float>(1.0 + perturbation * u[j]);
}

// The graph with its constants perturbed, rebuilt through the compiler's own rewriter.
Graph perturbed(const Graph& graph, std::uint64_t seed) {
  detail::GraphRewriter r(graph);
  for (std::size_t id = 0; id < graph.tensors().size(); ++id) {
    const TensorInfo& info = graph.tensors()[id];
    if (info.role == Role::Constant) {
      std::vector<float> values(static_cast<std::size_t>(info.desc.numel()));
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = load_as_f32(info.data->data(), i, info.desc.dtype);
      perturb(values, seed + id);
      const Tensor now = r.graph.constant(info.name, info.desc.shape, values, info.desc.dtype);
      r.replace(Tensor{static_cast<std::int32_t>(id)}, now);
    } else if (info.role == Role::Intermediate) {
      r.copy(graph.nodes()[static_cast<std::size_t>(info.producer)]);
    }
  }
  return std::move(r).finish();
}

// How much an output moves, in NMSE relative to itself, per NMSE its inputs and constants move: about
// 1 for most outputs, far more for one that is small beside the values it is computed from (a sum that
// cancels, a mean of values of both signs, a batchnorm's shift that nearly meets the conv's output).
// There the roundings of those values weigh as much more, on ref and on a device alike. The largest
// of a few perturbations: one moves an output of few elements by a random amount, now and then by
// next to nothing.
std::vector<double> sensitivities(const Device& ref, const Graph& graph, const Values& inputs, const Values& want,
                                  std::uint64_t seed) {
  constexpr int draws = 4;
  std::vector<double> result(want.size(), 1.0);
  for (std::uint64_t draw = 0; draw < draws; ++draw) {
    const std::uint64_t draw_seed = ~seed - (draw << 40);
    Values moved_inputs = inputs;
    for (std::size_t i = 0; i < inputs.size(); ++i) perturb(moved_inputs[i], draw_seed - (i << 20));
    const Values moved = run(ref, perturbed(graph, draw_seed), false, moved_inputs);
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double gain = cases::compare(moved[i], want[i]).nmse / (perturbation * perturbation / 3);
      if (std::isfinite(gain)) result[i] = std::max(result[i], gain);  // all zeros stay zeros: judged exactly
    }
  }
  return result;
}

}  // namespace

// An output's error enters where an op rounds a result that ref computes in f64 and the device in
// f32, or where the passes change what is rounded (a folded batchnorm, a fused epilogue). Each op adds
// at most what verify.hpp allows it alone, at its own output dtype; the errors of independent
// roundings add up in the NMSE, and downstream ops pass them on with a gain near 1 where nothing
// cancels (the generator keeps activations near unit scale; judged_limits takes the gain where
// something does). So an output is judged by the sum of those limits over the ops it depends on, not
// by the loosest one: a chain of ten bf16 convs may be ten times as far off as one, while an f32
// chain keeps f32's tight limits. Ops that only move or select values add nothing, except a
// narrowing cast of a value already off, which may round it to the neighbouring value. The max-abs
// limit adds up the same way.
cases::Limits output_limits(const Graph& graph, Tensor output) {
  std::vector<bool> needed(graph.tensors().size(), false), inexact(graph.tensors().size(), false);
  needed[static_cast<std::size_t>(output.id)] = true;
  for (auto i = graph.nodes().size(); i-- > 0;)
    if (const Node& n = graph.nodes()[i]; needed[static_cast<std::size_t>(n.output.id)])
      for (const Tensor t : n.inputs) needed[static_cast<std::size_t>(t.id)] = true;
  cases::Limits sum;
  for (const Node& n : graph.nodes()) {
    const DType dtype = graph.dtype(n.output);
    cases::Limits own = cases::limits_of(n.op, dtype);
    const bool off = std::any_of(n.inputs.begin(), n.inputs.end(),
                                 [&](Tensor t) { return inexact[static_cast<std::size_t>(t.id)]; });
    if (off && narrowing_cast(graph, n)) own = cases::limits_of(OpKind::Add, dtype);  // one elementwise rounding
    inexact[static_cast<std::size_t>(n.output.id)] = off || own.nmse > 0.0;
    if (!needed[static_cast<std::size_t>(n.output.id)]) continue;
    sum.nmse += own.nmse;
    sum.max_abs += own.max_abs;
  }
  return sum;
}

// What a device may differ by: output_limits, times the output's sensitivity (above), times a margin
// for the distance between the two estimates, set by measuring: over 30000 graphs on cpu, cpu:threads=1,
// opencl:0 (PoCL) and ref with the passes, the worst of 888000 outputs reached 8% of its limit.
cases::Limits judged_limits(const Graph& graph, Tensor output, double sensitivity) {
  constexpr double margin = 4.0;
  cases::Limits limits = output_limits(graph, output);
  limits.nmse *= margin * sensitivity;
  limits.max_abs *= margin * std::sqrt(sensitivity);
  return limits;
}

std::vector<cases::Limits> judged_limits(const Graph& graph, const Values& want,
                                         const std::vector<double>& sensitivity) {
  std::vector<cases::Limits> limits;
  for (std::size_t i = 0; i < want.size(); ++i) {
    limits.push_back(judged_limits(graph, graph.outputs()[i].second, sensitivity[i]));
    // All zeros: equal values that cancel (x * sigmoid(x) - sigmoid(x) * x, where the passes make one
    // a silu), or a relu of negative values. Errors are judged against the unit scale of the values
    // that cancelled, which the generator keeps activations at.
    if (std::all_of(want[i].begin(), want[i].end(), [](float w) { return w == 0.0f; })) limits.back().scale = 1.0;
  }
  return limits;
}

std::vector<cases::Limits> judged_output_limits(const Graph& graph, std::uint64_t input_seed) {
  static const Device ref = Device::open("ref");
  Values inputs;
  for (std::size_t i = 0; i < graph.inputs().size(); ++i)
    inputs.push_back(cases::random_input_values(graph, i, input_seed));
  const Values want = run(ref, graph, false, inputs);
  return judged_limits(graph, want, sensitivities(ref, graph, inputs, want, input_seed));
}

CheckOutcome check_graph(const Graph& graph, std::span<const Device> devices, std::uint64_t input_seed) {
  static const Device ref = Device::open("ref");
  CheckOutcome outcome;
  Values inputs;
  for (std::size_t i = 0; i < graph.inputs().size(); ++i)
    inputs.push_back(cases::random_input_values(graph, i, input_seed));
  Values want;
  std::vector<double> sensitivity;
  try {
    want = run(ref, graph, false, inputs);
    // A graph that overflows (x * x, squared again and again, leaves f16's range) has nothing to
    // judge its outputs by: it is skipped, as a device skips what it cannot run.
    for (std::size_t i = 0; i < want.size(); ++i)
      if (!std::all_of(want[i].begin(), want[i].end(), [](float w) { return std::isfinite(w); })) {
        outcome.skipped.push_back({"ref", "output '" + graph.outputs()[i].first + "' is not finite"});
        return outcome;
      }
    sensitivity = sensitivities(ref, graph, inputs, want, input_seed);
  } catch (const Error& e) {
    outcome.mismatches.push_back({"ref", false, "the oracle " + describe(e)});
    return outcome;
  }
  const std::vector<cases::Limits> limits = judged_limits(graph, want, sensitivity);
  // Whether the device runs the graph: a device that cannot without the passes is skipped; with
  // them it must run whatever it runs without.
  const auto judge = [&](const Device& device, bool optimize) {
    const std::string spec = device.info().spec;
    Values got;
    try {
      got = run(device, graph, optimize, inputs);
    } catch (const Error& e) {
      if (!optimize && e.code() == ErrorCode::Unsupported) {
        outcome.skipped.push_back({spec, e.what()});
        return false;
      }
      outcome.mismatches.push_back({spec, optimize, describe(e)});
      return true;
    }
    cases::Verification v;
    v.passed = true;
    for (std::size_t i = 0; i < want.size(); ++i) {
      const auto& [name, t] = graph.outputs()[i];
      cases::check_output(v, name, graph.shape(t), graph.dtype(t), limits[i], got[i], want[i]);
    }
    if (!v.passed) outcome.mismatches.push_back({spec, optimize, v.detail});
    return true;
  };
  judge(ref, true);
  for (const Device& device : devices)
    if (judge(device, false)) judge(device, true);
  return outcome;
}

std::string shrunk_failure(const Recipe& recipe, std::span<const Device> devices, const Mismatch& mismatch) {
  std::vector<Device> failing;  // the one that failed; ref is always checked
  for (const Device& d : devices)
    if (d.info().spec == mismatch.spec) failing.push_back(d);
  const auto same_failure = [&](const Graph& g) -> std::optional<Mismatch> {
    for (Mismatch& m : check_graph(g, failing, recipe.input_seed).mismatches)
      if (m.spec == mismatch.spec && m.optimize == mismatch.optimize) return std::move(m);
    return std::nullopt;
  };
  const Recipe small = shrink(recipe, [&](const Graph& g) { return same_failure(g).has_value(); });
  const Graph g = build(small)->graph;
  const std::optional<Mismatch> still = same_failure(g);
  return "// " + mismatch.spec + " with the passes " + (mismatch.optimize ? "on" : "off") + " against ref without: " +
         (still ? still->detail : mismatch.detail) + "\n// Shrunk from " + std::to_string(op_count(recipe)) +
         " ops to " + std::to_string(op_count(small)) + "; inputs from cases::set_random_inputs(exe, g, " +
         std::to_string(recipe.input_seed) + ").\n" + builder_code(g);
}

}  // namespace porta::graph_gen
