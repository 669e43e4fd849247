#include "models.hpp"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <span>
#include <variant>

#include <unistd.h>

#include <fmt/core.h>

#include "core/runtime/embedded_source.hpp"
#include "op_cases/verify.hpp"
#include "ort.hpp"

namespace porta::detail {
std::span<const EmbeddedSource> bench_scripts();  // bench/scripts/*.py, see CMakeLists.txt
}

namespace porta::bench {
namespace {

double network_flops(const Graph& g) {
  double flops = 0.0;
  for (const Node& n : g.nodes()) {
    const double outputs = static_cast<double>(g.desc(n.output).numel());
    if (n.op == OpKind::Conv2d) {
      const Shape& w = g.shape(n.inputs[1]);
      flops += 2.0 * outputs * static_cast<double>(w[1] * w[2] * w[3]);
    } else if (n.op == OpKind::Gemm || n.op == OpKind::MatMul) {
      const Shape& a = g.shape(n.inputs[0]);
      const bool trans_a = n.op == OpKind::Gemm ? std::get<GemmParams>(n.params).trans_a
                                                : std::get<MatMulParams>(n.params).trans_a;
      flops += 2.0 * outputs * static_cast<double>(a[a.size() - (trans_a ? 2 : 1)]);
    } else if (n.op == OpKind::Attention) {  // q kᵀ and p v, every score counted even where causal hides it
      const Shape &q = g.shape(n.inputs[0]), &v = g.shape(n.inputs[2]);
      flops += 2.0 * static_cast<double>(q[0] * q[1] * q[2] * v[2] * (q[3] + v[3]));
    }
  }
  return flops;
}

// The convs porta's cpu backend (and cuDNN) may run with Winograd: ungrouped, undilated, 3x3 stride 1.
std::int64_t convs_3x3_stride1(const Graph& g) {
  std::int64_t count = 0;
  for (const Node& n : g.nodes()) {
    if (n.op != OpKind::Conv2d) continue;
    const auto& p = std::get<Conv2dParams>(n.params);
    const Shape& w = g.shape(n.inputs[1]);
    const std::array<std::int64_t, 2> one{1, 1};
    if (p.groups == 1 && w[2] == 3 && w[3] == 3 && p.stride == one && p.dilation == one) ++count;
  }
  return count;
}

// $PORTA_PYTHON, else Debian's python3 (where python3-torch installs), else python3 on the PATH.
std::string python() {
  if (const char* chosen = std::getenv("PORTA_PYTHON"); chosen && *chosen) return chosen;
  return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

}  // namespace

Problem model_problem(const std::string& name, std::int64_t batch, DType dtype, std::uint64_t seed, std::int64_t seq) {
  const bool sequence = name.starts_with("bert");  // its input is a sequence, not an image
  Problem p{.op = "model", .kind = OpKind::Conv2d,
            .workload = sequence ? fmt::format("{} b{} s{}", name, batch, seq) : fmt::format("{} b{}", name, batch),
            .dtype = dtype};
  p.graph = models::build(name, {.batch = batch, .dtype = dtype, .seed = seed, .seq = sequence ? seq : 0});
  const Shape& input = p.graph.shape(p.graph.inputs().at(0));
  p.params = {{"model", name}, {"batch", batch}, {"convs_3x3_stride1", convs_3x3_stride1(p.graph)}};
  p.params[sequence ? "seq" : "resolution"] = sequence ? input[1] : input[2];
  p.flops = network_flops(p.graph);
  for (const TensorInfo& t : p.graph.tensors())
    if (t.role != Role::Intermediate) p.bytes += static_cast<double>(t.desc.bytes());
  p.bytes += static_cast<double>(p.graph.desc(p.graph.outputs().at(0).second).bytes());
  return p;
}

std::string torch_device_spec(int threads) { return fmt::format("pytorch-cpu:threads={}", threads); }

namespace {

// PyTorch computes the same network in another order: the whole output is held to a relative L2
// error of 1e-4 and no element further off than 1e-3 of the largest, as the ONNX Runtime column is.
constexpr cases::Limits torch_limits{.nmse = 1e-8, .max_abs = 1e-3, .scale = 0.0};

Row torch_row(const Problem& model, int threads) {
  Row row{.op = model.op, .workload = model.workload, .params = model.params,
          .device = torch_device_spec(threads), .backend = "pytorch", .impl = "eager",
          .dtype = std::string(to_string(model.dtype)), .flops = model.flops, .bytes = model.bytes};
  if (model.dtype != DType::f32) {
    row.status = "unsupported";
    row.reason = "the PyTorch reference runs f32 only";
  }
  return row;
}

}  // namespace

// Runs bench/scripts/<name>.py with `arguments` and the timing policy; its last line is JSON. Every
// script goes into one temporary folder beside it, so that it can import the ones it shares.
std::string run_script(std::string_view name, const std::string& arguments, int threads, const TimingPolicy& timing) {
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / fmt::format("porta-scripts-{}", ::getpid());
  std::filesystem::create_directories(folder);
  bool found = false;
  for (const detail::EmbeddedSource& s : detail::bench_scripts()) {
    std::ofstream(folder / fmt::format("{}.py", s.name)) << s.text;
    found = found || s.name == name;
  }
  if (!found) throw Error(ErrorCode::Internal, "porta-bench was built without its script " + std::string(name));
  const std::string command =
      fmt::format("{} {} {} --threads {} --warmup {} --min-samples {} --min-time {} --max-time {} 2>&1", python(),
                  (folder / fmt::format("{}.py", name)).string(), arguments, threads, timing.warmup_s,
                  timing.min_samples, timing.min_time_s, timing.max_time_s);
  const std::string out = ort::capture_output(command);
  std::filesystem::remove_all(folder);
  return out;
}

namespace {

// The script's timing (or the error it reports) into `row`.
void read_torch_result(Row& row, const std::string& out, const Problem& model) {
  const std::size_t brace = out.rfind("\n{");
  const Json result = Json::parse(brace == std::string::npos ? out : out.substr(brace + 1), nullptr, false);
  if (result.is_discarded() || !result.is_object()) {
    row.status = "unsupported";
    row.reason = "python3 with PyTorch could not run: " + single_line(out.substr(0, 300));
  } else if (result.contains("error")) {
    row.status = "unsupported";
    row.reason = result["error"].get<std::string>();
  } else {
    row.samples = result["samples"].get<int>();
    row.timer = "host";
    row.median_s = row.host_median_s = result["median_s"].get<double>();
    row.min_s = row.host_min_s = result["min_s"].get<double>();
    row.p90_s = result["p90_s"].get<double>();
    row.first_run_s = result["first_run_s"].get<double>();
    row.gflops = model.flops / *row.median_s * 1e-9;
    row.gbs = model.bytes / *row.median_s * 1e-9;
    row.params["reference"] = result["version"];
  }
}

}  // namespace

Row torch_reference(const Problem& model, int threads, const TimingPolicy& timing) {
  Row row = torch_row(model, threads);
  if (row.status == "unsupported") return row;
  read_torch_result(row, run_script("torch_reference", fmt::format("--model {} --batch {} --resolution {}",
                                                                    model.params["model"].get<std::string>(),
                                                                    model.params["batch"].get<std::int64_t>(),
                                                                    model.params["resolution"].get<std::int64_t>()),
                                    threads, timing), model);
  return row;
}

namespace {

// The graph's constants and its inputs' `values` (in Graph::inputs() order), as float32 in one file
// beside a JSON index the script reads.
void write_tensors(const Graph& g, const std::vector<std::vector<float>>& inputs, const std::filesystem::path& index,
                   const std::filesystem::path& data) {
  std::ofstream out(data, std::ios::binary);
  Json tensors = Json::array();
  std::int64_t offset = 0;
  const auto put = [&](const std::string& name, const Shape& shape, std::span<const float> values) {
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size_bytes()));
    tensors.push_back({{"name", name}, {"shape", shape}, {"offset", offset}});
    offset += static_cast<std::int64_t>(values.size());
  };
  for (const TensorInfo& t : g.tensors()) {
    if (t.role != Role::Constant) continue;
    std::vector<float> values(static_cast<std::size_t>(t.desc.numel()));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = load_as_f32(t.data->data(), i, t.desc.dtype);
    put(t.name, t.desc.shape, values);
  }
  const std::vector<Tensor> graph_inputs = g.inputs();
  for (std::size_t i = 0; i < graph_inputs.size(); ++i)
    put(g.info(graph_inputs[i]).name, g.shape(graph_inputs[i]), inputs[i]);
  if (!out.flush()) throw Error(ErrorCode::IoError, "porta-bench: cannot write " + data.string());
  std::ofstream(index) << Json{{"file", data.string()}, {"tensors", tensors}}.dump();
}

std::vector<float> read_floats(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<float> values(std::filesystem::exists(file) ? std::filesystem::file_size(file) / sizeof(float) : 0);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  return values;
}

// porta's outputs on `cpu` for `inputs`, checked against `reference`: the outputs' values one after
// another, in the graph's order.
cases::Verification check_outputs(const Problem& model, const Device& cpu, const RunSettings& settings,
                                  const std::vector<std::vector<float>>& inputs, std::span<const float> reference) {
  Executable exe = cpu.compile(model.graph, settings.compile);
  const std::vector<Tensor> graph_inputs = model.graph.inputs();
  for (std::size_t i = 0; i < graph_inputs.size(); ++i)
    exe.set_input(model.graph.info(graph_inputs[i]).name, inputs[i]);
  exe.run();
  cases::Verification v{.passed = true};
  std::size_t offset = 0;
  for (const auto& [name, y] : model.graph.outputs()) {
    const auto count = static_cast<std::size_t>(model.graph.desc(y).numel());
    const std::span<const float> theirs =
        offset + count <= reference.size() ? reference.subspan(offset, count) : std::span<const float>{};
    cases::check_output(v, name, model.graph.shape(y), DType::f32, torch_limits, theirs, exe.output(name));
    offset += count;
  }
  return v;
}

}  // namespace

Row torch_transformer_reference(const Problem& model, const Device& cpu, const RunSettings& settings) {
  const int threads = cpu.info().threads;
  Row row = torch_row(model, threads);
  if (row.status == "unsupported") return row;
  const auto temp = std::filesystem::temp_directory_path() / fmt::format("porta-torch-{}", ::getpid());
  const auto index = temp.string() + ".json", data = temp.string() + ".bin", output = temp.string() + ".out";
  std::vector<std::vector<float>> inputs;
  for (std::size_t i = 0; i < model.graph.inputs().size(); ++i)
    inputs.push_back(cases::random_input_values(model.graph, i, settings.seed));
  write_tensors(model.graph, inputs, index, data);
  read_torch_result(row, run_script("torch_transformers",
                                    fmt::format("--model {} --tensors {} --output {} --classes {}",
                                                model.params["model"].get<std::string>(), index, output,
                                                model.graph.shape(model.graph.outputs().at(0).second).back()),
                                    threads, settings.timing), model);
  const std::vector<float> torch_outputs = read_floats(output);
  for (const auto& file : {index, data, output}) std::filesystem::remove(file);
  if (row.status == "unsupported") return row;
  record_verification(row, check_outputs(model, cpu, settings, inputs, torch_outputs));
  row.oracle = "porta " + cpu.info().spec;
  return row;
}

namespace {

// A peer whose output was checked against porta's (its oracle "porta <spec>") checked porta's too: it
// verifies porta's native rows of that device, run as the check ran (the device's layout), where
// nothing else did. ref would take minutes a run on a transformer.
void verified_by_peer(std::span<Row> own, const Row& peer) {
  if (peer.status != "ok" || peer.verified != true || !peer.oracle.starts_with("porta ")) return;
  for (Row& row : own)
    if (row.status == "ok" && row.impl == "native" && !row.verified && "porta " + row.device == peer.oracle) {
      row.verified = true;
      row.reason.clear();  // a "not verified: ..." of its own check
      row.nmse = peer.nmse;
      row.max_abs = peer.max_abs;
      row.oracle = peer.device;
    }
}

}  // namespace

std::vector<Row> run_models(const std::vector<Problem>& models, const std::vector<Target>& targets,
                            const RunSettings& settings, const std::vector<std::optional<Layout>>& layouts,
                            References references, bool profile) {
  std::vector<Row> rows;
  for (const Problem& model : models) {
    for (const Target& target : targets) {
      const std::size_t own = rows.size();
      for (const Provider provider : settings.providers) {
        for (const std::optional<Layout> layout : layouts) {
          RunSettings one = with_provider(settings, provider);
          one.compile.layout = layout;
          Row row = run_problem(model, target, one);
          if (layout) {
            const std::string name = *layout == Layout::NHWC ? "nhwc" : "nchw";
            row.impl += "/" + name;
            row.params["layout"] = name;
          }
          if (row.status == "ok") {
            const MemoryEstimate e = target.device->estimate_memory(model.graph, one.compile);
            row.params["planned_peak_bytes"] = e.peak_bytes();
            row.params["planned_activation_bytes"] = e.arena_bytes;
            if (profile) print_model_profile(stdout, model, *target.device, one.compile);
          }
          fmt::print(stderr, "{} on {} ({}): {}\n", model.workload, row.device, row.impl,
                     row.median_s ? fmt::format("{:.2f} ms", *row.median_s * 1e3) : row.status);
          rows.push_back(std::move(row));
        }
      }
      for (Row& row : reference_rows(model, target, settings, references, profile)) {
        verified_by_peer(std::span(rows).subspan(own), row);
        rows.push_back(std::move(row));
      }
    }
  }
  return rows;
}

std::vector<ort::NodeTime> profiled_node_times(const Problem& model, const Device& device,
                                               const CompileOptions& options, int runs) {
  CompileOptions profiled = options;
  profiled.profile = true;
  Executable exe = device.compile(model.graph, profiled);
  cases::set_random_inputs(exe, model.graph, 1);
  exe.run();  // the first run pays one-time costs
  std::vector<ort::NodeTime> mean;
  for (int r = 0; r < runs; ++r) {
    exe.run();
    const std::vector<ort::NodeTime> times = ort::node_times(exe);
    if (mean.empty()) mean.resize(times.size());
    for (std::size_t i = 0; i < times.size(); ++i) {
      mean[i].name = times[i].name, mean[i].op = times[i].op;
      mean[i].seconds += times[i].seconds / runs;
    }
  }
  return mean;
}

void print_model_profile(std::FILE* out, const Problem& model, const Device& device, const CompileOptions& options) {
  fmt::print(out, "\n{} on {} ({}), by kind of node, mean of 5 profiled runs:\n", model.workload, device.info().spec,
             to_string(options.impl));
  ort::print_by_kind(out, model.graph, {{"porta", profiled_node_times(model, device, options, 5)}});
}

void print_model_summary(std::FILE* out, const std::vector<Row>& rows) {
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    if (r.op != "model") continue;
    const auto batch = r.params["batch"].get<std::int64_t>();
    const std::string peak = r.params.contains("planned_peak_bytes")
                                 ? fmt::format("{:.1f}", r.params["planned_peak_bytes"].get<double>() / (1 << 20))
                                 : "";
    cells.push_back({r.workload, r.device, r.impl, r.median_s ? fmt::format("{:.2f}", *r.median_s * 1e3) : r.status,
                     r.median_s ? fmt::format("{:.1f}", static_cast<double>(batch) / *r.median_s) : "",
                     r.gflops ? rate_cell(r) : "", peak});
  }
  print_text_table(out, {"model", "device", "impl", "latency ms", "images/s", "GFLOP/s", "planned peak MiB"}, cells,
                   {false, false, false, true, true, true, true});
  print_effective_note(out, rows);
}

Fit fit_batch(const std::string& model, const Device& device, DType dtype, std::uint64_t budget,
              std::int64_t max_batch) {
  return fit_batch([&](std::int64_t batch) {
    return device.estimate_memory(models::build(model, {.batch = batch, .dtype = dtype}));
  }, budget, max_batch);
}

Fit fit_batch(const BatchPlan& plan, std::uint64_t budget, std::int64_t max_batch) {
  Fit fit{.at_batch = plan(1), .budget = budget};
  if (fit.at_batch.peak_bytes() > budget) return fit;
  // Double until the plan no longer fits, then bisect between the last fit and the first miss.
  std::int64_t good = 1, bad = 0;
  while (bad == 0 && good < max_batch) {
    const std::int64_t next = std::min(good * 2, max_batch);
    const MemoryEstimate e = plan(next);
    if (e.peak_bytes() <= budget) {
      good = next, fit.at_batch = e;
    } else {
      bad = next;
    }
  }
  while (bad - good > 1) {
    const std::int64_t mid = good + (bad - good) / 2;
    const MemoryEstimate e = plan(mid);
    if (e.peak_bytes() <= budget) {
      good = mid, fit.at_batch = e;
    } else {
      bad = mid;
    }
  }
  fit.batch = good;
  return fit;
}

}  // namespace porta::bench
