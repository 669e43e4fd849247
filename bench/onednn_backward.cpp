// The `backward` suite's vendor rows: the problem described to oneDNN's module (onednn_backward.hpp),
// its call timed and its output verified like any outside library's.
#include "onednn_backward.hpp"

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "backward.hpp"
#include "bench_module.hpp"

namespace porta::bench {
namespace {

using Prepare = OnednnCall* (*)(const OnednnProblem*, char*, std::size_t, bool*);

// The module's entry point, loaded on the first vendor row; or null and why.
struct Module {
  Prepare prepare = nullptr;
  std::string failure;
};

const Module& onednn_module() {
  static const Module module = []() -> Module {
    if (!PORTA_BENCH_ONEDNN)
      return {.failure = "porta-bench's oneDNN module was not built: the cpu backend has no oneDNN in this build "
                         "(not found, Debian: libdnnl-dev; -DPORTA_WITH_ONEDNN=OFF; or no cpu backend)"};
    try {
      return {.prepare = reinterpret_cast<Prepare>(
                  module_entry("onednn", "porta_bench_onednn_prepare", ModuleSymbols::Local))};
    } catch (const Error& e) {
      return {.failure = e.what()};
    }
  }();
  return module;
}

std::string unsupported_reason(const Problem& problem, const Target& target) {
  if (target.backend != "cpu") return "oneDNN's backward primitives stand beside cpu devices only";
  if (problem.dtype != DType::f32) return "the oneDNN backward rows are f32 only";
  return onednn_module().failure;
}

// The inputs' values (those set_random_inputs gives porta's run of the graph), by name, the
// gradient, and oneDNN's call that reads and writes them.
struct Operands {
  std::map<std::string, std::vector<float>> values;
  std::vector<float> out;
  std::unique_ptr<OnednnCall> call;

  const float* input(const std::string& name) const { return values.at(name).data(); }
};

OnednnProblem describe(const Problem& problem, Operands& ops, int threads) {
  const Json& j = problem.params;
  OnednnProblem d{.op = problem.kind == OpKind::Conv2d ? OnednnProblem::Op::Conv2d : OnednnProblem::Op::Gemm,
                  .data = j["gradient"] == "data",
                  .threads = threads,
                  .out = ops.out.data()};
  if (d.op == OnednnProblem::Op::Conv2d) {
    const cases::ConvProblem p = conv_problem_of(j);
    const Conv2dParams& c = p.params;
    d.conv = {.n = p.n, .c = p.c, .h = p.h, .w = p.w, .k = p.k, .r = p.r, .s = p.s, .p = j["p"], .q = j["q"],
              .groups = c.groups,
              .stride = {c.stride[0], c.stride[1]},
              .dilation = {c.dilation[0], c.dilation[1]},
              .pad = {c.pad[0], c.pad[1], c.pad[2], c.pad[3]},
              .nhwc = c.layout == Layout::NHWC,
              .x = ops.input("x"),
              .weights = ops.input("w"),
              .dy = ops.input("dy")};
  } else {
    const cases::GemmProblem p = gemm_problem_of(j);
    d.gemm = {.m = p.m, .n = p.n, .k = p.k, .trans_b = p.trans_b,
              .a = ops.input("a"), .b = ops.input("b"), .dc = ops.input("dc")};
  }
  return d;
}

}  // namespace

Prepared prepare_onednn_backward(const Problem& problem, const Target& target, const RunSettings& settings) {
  Prepared p = outside_run(problem, target, settings, unsupported_reason(problem, target));
  if (p.row.status != "ok") return p;
  auto ops = std::make_shared<Operands>();
  const Graph& graph = problem.graph;
  for (std::size_t i = 0; i < graph.inputs().size(); ++i)
    ops->values[graph.info(graph.inputs()[i]).name] = cases::random_input_values(graph, i, settings.seed);
  ops->out.resize(static_cast<std::size_t>(graph.desc(graph.outputs().front().second).numel()));
  const OnednnProblem described = describe(problem, *ops, target.device->info().threads);
  char error[512] = {};
  bool unimplemented = false;
  const double start = steady_seconds();
  ops->call.reset(onednn_module().prepare(&described, error, sizeof error, &unimplemented));
  p.row.compile_s = steady_seconds() - start;
  if (!ops->call) {
    p.row.status = unimplemented ? "unsupported" : "failed";
    p.row.reason = unimplemented ? fmt::format("oneDNN has no backward primitive for this case on this CPU ({})", error)
                                 : fmt::format("oneDNN's primitives could not be made: {}",
                                               error[0] != '\0' ? error : "the module gave no reason");
    return p;
  }
  if (const std::string failure = ops->call->run(); !failure.empty()) {
    p.row.status = "failed";
    p.row.reason = "oneDNN's first run failed: " + failure;
    return p;
  }
  p.row.first_run_s = steady_seconds() - start;
  p.row.algo = ops->call->algo();
  p.sample = [ops] {
    if (const std::string failure = ops->call->run(); !failure.empty()) throw std::runtime_error(failure);
    return std::optional<double>{};
  };
  p.verify = [&problem, ops, settings](Row& row) { verify_host_output(row, problem, ops->out, settings); };
  return p;
}

}  // namespace porta::bench
