// ONNX Runtime beside porta's cpu device in `porta-bench model` and the models suite, and the
// reference rows (PyTorch, ONNX Runtime) that sit beside a cpu target.
#include <algorithm>
#include <filesystem>

#include <unistd.h>

#include <fmt/core.h>

#include "models.hpp"
#include "op_cases/verify.hpp"
#include "ort.hpp"
#include "porta/onnx.hpp"

namespace porta::bench {
namespace {

// ORT fuses and reorders differently from porta, so the whole network's output is held to what the
// models test asks of porta against torch: a relative L2 error of 1e-4, and no element further off
// than 1e-3 of the largest.
constexpr cases::Limits ort_limits{.nmse = 1e-8, .max_abs = 1e-3, .scale = 0.0};

// porta's outputs on `cpu` for the same inputs, against ORT's.
cases::Verification check_against_porta(const Problem& model, const Device& cpu, const RunSettings& settings,
                                        const std::vector<ort::Input>& inputs, const ort::Result& r) {
  Executable exe = cpu.compile(model.graph, settings.compile);
  for (const ort::Input& in : inputs) exe.set_input(in.name, in.values);
  exe.run();
  cases::Verification v{.passed = true};
  for (const auto& [name, t] : model.graph.outputs()) {
    const std::string& wanted = name;  // clang 15 does not capture structured bindings
    const auto it = std::find_if(r.outputs.begin(), r.outputs.end(), [&](const ort::Output& o) { return o.name == wanted; });
    if (it == r.outputs.end()) {
      v.passed = false;
      v.detail += fmt::format("ONNX Runtime gave no output '{}'. ", name);
      continue;
    }
    cases::check_output(v, name, model.graph.shape(t), DType::f32, ort_limits, it->values, exe.output(name));
  }
  return v;
}

void print_done(const Row& t) {
  fmt::print(stderr, "{} on {}: {}\n", t.workload, t.device,
             t.median_s ? fmt::format("{:.2f} ms", *t.median_s * 1e3) : t.status + ": " + t.reason);
}

}  // namespace

std::string ort_device_spec(int threads) { return fmt::format("onnxruntime-cpu:threads={}", threads); }

Row ort_reference(const Problem& model, const Device& cpu, const RunSettings& settings, bool profile) {
  const int threads = cpu.info().threads;
  Row row{.op = model.op, .workload = model.workload, .params = model.params, .device = ort_device_spec(threads),
          .backend = "onnxruntime", .impl = "cpu", .dtype = std::string(to_string(model.dtype)),
          .flops = model.flops, .bytes = model.bytes};
  if (model.dtype != DType::f32) {
    row.status = "unsupported";
    row.reason = "the ONNX Runtime reference runs f32 only";
    return row;
  }
  const auto file = std::filesystem::temp_directory_path() / fmt::format("porta-ort-{}.onnx", ::getpid());
  std::vector<ort::Input> inputs;
  const std::vector<Tensor> graph_inputs = model.graph.inputs();
  for (std::size_t i = 0; i < graph_inputs.size(); ++i)
    inputs.push_back({model.graph.info(graph_inputs[i]).name, model.graph.shape(graph_inputs[i]),
                      cases::random_input_values(model.graph, i, settings.seed), model.graph.dtype(graph_inputs[i])});
  ort::Result r;
  try {
    onnx::save(model.graph, file);
    const TimingPolicy& t = settings.timing;
    r = ort::run(file, inputs, {.threads = threads, .warmup_s = t.warmup_s, .min_samples = t.min_samples,
                                .min_time_s = t.min_time_s, .max_time_s = t.max_time_s, .profile_runs = profile ? 6 : 0});
  } catch (const Error& e) {
    r.error = e.what();
  }
  std::filesystem::remove(file);
  if (!r.error.empty()) {
    row.status = "unsupported";
    row.reason = single_line(r.error);
    return row;
  }
  record_verification(row, check_against_porta(model, cpu, settings, inputs, r));
  row.oracle = "porta " + cpu.info().spec;
  row.params["reference"] = r.version;
  if (row.status != "ok") return row;
  row.samples = r.samples;
  row.timer = "host";
  row.median_s = row.host_median_s = r.median_s;
  row.min_s = row.host_min_s = r.min_s;
  row.p90_s = r.p90_s;
  row.first_run_s = r.first_run_s;
  row.gflops = model.flops / r.median_s * 1e-9;
  row.gbs = model.bytes / r.median_s * 1e-9;
  if (profile) {
    fmt::print("\n{}: porta on {} beside ONNX Runtime ({} threads), by kind of node, mean of 5 profiled runs each:\n",
               model.workload, cpu.info().spec, threads);
    ort::print_by_kind(stdout, model.graph,
                       {{"porta", profiled_node_times(model, cpu, settings.compile, 5)}, {"ORT", r.profile}});
  }
  return row;
}

std::vector<Row> reference_rows(const Problem& model, const Target& target, const RunSettings& settings,
                                References which, bool profile) {
  std::vector<Row> rows;
  if (!target.device || target.backend != "cpu") return rows;
  const bool transformer = model.params.contains("seq") || model.params["model"] == "vit-b16";
  if (which.torch)
    print_done(rows.emplace_back(transformer ? torch_transformer_reference(model, *target.device, settings)
                                             : torch_reference(model, target.device->info().threads, settings.timing)));
  if (which.ort) print_done(rows.emplace_back(ort_reference(model, *target.device, settings, profile)));
  return rows;
}

}  // namespace porta::bench
