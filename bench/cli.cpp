// porta-bench's command line: wiring only. The work lives in problems/suites/results/devices.
#include "cli.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include "cluster.hpp"
#include "comm.hpp"
#include "compare.hpp"
#include "devices.hpp"
#include "env.hpp"
#include "models.hpp"
#include "porta/onnx.hpp"
#include "problems.hpp"
#include "report.hpp"
#include "results.hpp"
#include "results_file.hpp"
#include "run.hpp"
#include "suites.hpp"
#include "train.hpp"
#include "tune.hpp"

namespace porta::bench {
namespace {

// Anything porta rejects while the command line is being turned into problems and devices is the
// caller's mistake, whatever its ErrorCode; so is a problem too big to even build.
template <class F>
auto checking_arguments(F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    throw ArgumentError(e.what());
  } catch (const std::bad_alloc&) {  // weights are made on the host while the problem is built
    throw ArgumentError("the problem is too large to build in this host's memory");
  } catch (const std::length_error&) {
    throw ArgumentError("the problem is too large to build in this host's memory");
  }
}

// CLI11's own number checks print the whole double range and let integer overflow saturate; this
// one says in a few words what is wrong.
template <class T>
CLI::Validator number_check(T bound, bool bound_allowed, const char* name) {
  const auto check = [=](std::string& text) -> std::string {
    T value{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) return fmt::format("{} is out of range", text);
    if (ec != std::errc{} || end != text.data() + text.size()) return fmt::format("'{}' is not a number", text);
    if constexpr (std::is_floating_point_v<T>)
      if (!std::isfinite(value)) return fmt::format("{} is not a finite number", text);
    if (value < bound || (value == bound && !bound_allowed))
      return fmt::format("{} must be {} {}", text, bound_allowed ? ">=" : ">", bound);
    return {};
  };
  return CLI::Validator(check, name);
}

const CLI::Validator positive = number_check<std::int64_t>(0, false, "POSITIVE");
const CLI::Validator non_negative = number_check<std::int64_t>(0, true, "NONNEGATIVE");
const CLI::Validator positive_count = number_check<int>(0, false, "POSITIVE");
const CLI::Validator positive_seconds = number_check<double>(0.0, false, "POSITIVE");
const CLI::Validator non_negative_seconds = number_check<double>(0.0, true, "NONNEGATIVE");

struct MeasureArgs {
  std::vector<std::string> devices;
  std::vector<std::string> impls{"native"};
  bool allow_tf32 = false, explain = false;
  std::uint64_t seed = 42;
  TimingPolicy timing;
};

struct OutputArgs {
  std::string dtype = "f32";
  bool verify = false;
  std::string json, csv;
};

void add_measure_options(CLI::App* cmd, MeasureArgs& a) {
  cmd->add_option("--device", a.devices, "Device specs, comma-separated or repeated (default: every device)");
  cmd->add_option("--impl", a.impls,
                  "Kernel providers, comma-separated or repeated: native, vendor, openblas (f32 GEMM on cpu)")
      ->delimiter(',')->check(CLI::IsMember({"native", "vendor", "openblas"}));
  cmd->add_flag("--allow-tf32", a.allow_tf32, "Let f32 GEMM/conv use tf32 matrix units where they exist");
  cmd->add_flag("--explain", a.explain, "Print each CPU kernel call's plan on stderr, a line each (PORTA_VERBOSE=1)");
  cmd->add_option("--seed", a.seed, "Seed of the random inputs and weights")
      ->check(number_check<std::uint64_t>(0, true, "UINT"))->capture_default_str();
  cmd->add_option("--warmup", a.timing.warmup_s, "Seconds of warm-up runs")->check(non_negative_seconds)
      ->capture_default_str();
  cmd->add_option("--min-samples", a.timing.min_samples, "Least number of timed runs")
      ->check(positive_count)->capture_default_str();
  cmd->add_option("--min-time", a.timing.min_time_s, "Least seconds of timed runs")
      ->check(non_negative_seconds)->capture_default_str();
  cmd->add_option("--max-time", a.timing.max_time_s, "Most seconds of timed runs per device")
      ->check(positive_seconds)->capture_default_str();
}

void add_output_options(CLI::App* cmd, OutputArgs& a) {
  cmd->add_option("--dtype", a.dtype, "Storage dtype: f32, f16 or bf16")->capture_default_str();
  cmd->add_flag("--verify", a.verify, "Check each result against the reference device (outside the timing)");
  cmd->add_option("--json", a.json, "Write the results as JSON (schema porta-bench/1)");
  cmd->add_option("--csv", a.csv, "Write the results as CSV");
}

RunSettings settings_from(const MeasureArgs& a, bool verify) {
  RunSettings s{.timing = a.timing, .verify = verify, .seed = a.seed};
  s.providers.clear();
  for (const std::string& impl : a.impls)
    s.providers.push_back(impl == "vendor" ? Provider::Vendor : impl == "openblas" ? Provider::OpenBlas : Provider::Native);
  s.compile.allow_tf32 = a.allow_tf32;
  return s;
}

std::vector<DeviceInfo> infos_of(const std::vector<Target>& targets) {
  std::vector<DeviceInfo> infos;
  for (const Target& t : targets)
    if (t.device) infos.push_back(t.device->info());
  return infos;
}

// Opens the devices and checks the output files before anything runs, so nothing is lost at the end.
std::vector<Target> prepare_targets(const MeasureArgs& m, const std::vector<std::string>& files) {
  // The cpu backend reads PORTA_VERBOSE when its first device opens, below.
  if (m.explain) setenv("PORTA_VERBOSE", "1", 1);
  return checking_arguments([&] {
    for (const std::string& file : files)
      if (!file.empty()) check_writable(file);
    std::vector<Target> targets = open_targets(m.devices);
    if (targets.empty())
      throw Error(ErrorCode::NotFound, "no usable device in this build: see `porta-bench devices`");
    return targets;
  });
}

int finish(const std::vector<Row>& rows) { return any_failed(rows) ? 1 : 0; }

int run_problems(const std::vector<Problem>& problems, const MeasureArgs& m, const OutputArgs& o,
                 const std::string& command_line) {
  const std::vector<Target> targets = prepare_targets(m, {o.json, o.csv});
  const std::vector<Row> rows = run_all(problems, targets, settings_from(m, o.verify), false);
  print_table(stdout, rows);
  if (!o.json.empty()) write_json(o.json, environment(infos_of(targets), command_line), rows);
  if (!o.csv.empty()) write_csv(o.csv, rows);
  return finish(rows);
}

// ./porta-results/<UTC timestamp>/, made unique if two runs start in the same second.
std::filesystem::path results_folder(const std::string& out) {
  std::filesystem::path dir = out.empty() ? std::filesystem::path("porta-results") / utc_timestamp_path()
                                           : std::filesystem::path(out);
  if (out.empty())
    for (int i = 2; std::filesystem::exists(dir); ++i)
      dir = std::filesystem::path("porta-results") / fmt::format("{}-{}", utc_timestamp_path(), i);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw ArgumentError(fmt::format("cannot create results folder '{}': {}", dir.string(), ec.message()));
  return dir;
}

struct SuiteArgs {
  SuiteRequest request;
  std::vector<std::string> dtypes, layouts;
  std::string out, peaks;
  SuiteOptions options;
  double rank_timeout_s = 3600.0;
};

// In a job launched by mpirun or srun, each rank's device specs with ":local" made its own.
MeasureArgs for_this_rank(MeasureArgs m, const Cluster& job) {
  for (std::string& spec : m.devices) spec = local_device_spec(spec, job.local_rank());
  return m;
}

int run_suite(SuiteArgs& s, const MeasureArgs& all_ranks, const std::string& command_line) {
  Cluster& job = cluster();
  job.set_timeout(s.rank_timeout_s);
  const MeasureArgs m = for_this_rank(all_ranks, job);
  const Suite suite = checking_arguments([&] {
    for (const std::string& d : s.dtypes) s.request.dtypes.push_back(parse_dtype(d));
    for (const std::string& l : s.layouts) s.request.conv_layouts.push_back(l == "nhwc" ? Layout::NHWC : Layout::NCHW);
    if (!s.peaks.empty()) s.options.ceilings = recorded_ceilings(load_results(s.peaks));
    return make_suite(s.request, m.seed);
  });
  const std::vector<Target> targets = prepare_targets(m, {});  // first: a bad spec leaves no empty folder
  if (job.rank() != 0) return run_suite(suite, targets, settings_from(m, true), s.options, {}, command_line, job);
  const std::filesystem::path dir = results_folder(s.out);
  checking_arguments([&] {
    for (const char* file : {"results.json", "results.csv", "report.html"}) check_writable(dir / file);
  });
  return run_suite(suite, targets, settings_from(m, true), s.options, dir, command_line, job);
}

std::string join_command_line(const std::vector<std::string>& args) {
  std::string line;
  for (const std::string& a : args) {
    if (!line.empty()) line += ' ';
    line += a.find_first_of(" \t\"'") == std::string::npos ? a : "'" + a + "'";
  }
  return line;
}

// One subcommand: its options, bound to arguments of its own, and what it does once they are
// parsed (check_only: check the arguments, problem shapes included, and touch nothing).
struct Command {
  CLI::App* app;
  std::function<int(bool check_only)> run;
};

template <class Args>
std::shared_ptr<Args> args_for() {
  return std::make_shared<Args>();
}

void check_dtype(const std::string& name) {
  checking_arguments([&] { parse_dtype(name); });
}

Command add_devices_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List backends and their devices, and why a backend has none");
  return {cmd, [](bool check_only) {
            if (!check_only) print_devices(stdout);
            return 0;
          }};
}

Command add_support_command(CLI::App& app) {
  auto markdown = args_for<bool>();
  auto* cmd = app.add_subcommand("support", "Print the op x device support matrix");
  cmd->add_flag("--markdown", *markdown, "As a markdown table (docs/ops.md)");
  return {cmd, [markdown](bool check_only) {
            if (!check_only) print_support_matrix(stdout, *markdown);
            return 0;
          }};
}

struct GemmArgs {
  cases::GemmProblem gemm;
  MeasureArgs measure;
  OutputArgs output;
};

int run_gemm(GemmArgs& a, bool check_only, const std::string& command_line) {
  // The shapes alone, so that a problem too large to build is refused before weights are made.
  checking_arguments([&] {
    a.gemm.dtype = parse_dtype(a.output.dtype);
    cases::gemm_graph(a.gemm);
  });
  if (check_only) return 0;
  const std::vector<Problem> problems = checking_arguments([&] { return std::vector{gemm_problem(a.gemm)}; });
  return run_problems(problems, a.measure, a.output, command_line);
}

Command add_gemm_command(CLI::App& app, const std::string& command_line) {
  auto a = args_for<GemmArgs>();
  cases::GemmProblem& gemm = a->gemm;
  auto* cmd = app.add_subcommand("gemm", "Time C = op(A) op(B), A is MxK, B is KxN");
  cmd->add_option("--m", gemm.m, "Rows of C")->required()->check(positive);
  cmd->add_option("--n", gemm.n, "Columns of C")->required()->check(positive);
  cmd->add_option("--k", gemm.k, "Inner dimension")->required()->check(positive);
  cmd->add_flag("--trans-a", gemm.trans_a, "A is stored KxM");
  cmd->add_flag("--trans-b", gemm.trans_b, "B is stored NxK");
  cmd->add_option("--batch", gemm.batch, "Independent GEMMs per run")->check(positive)->capture_default_str();
  add_output_options(cmd, a->output);
  add_measure_options(cmd, a->measure);
  return {cmd, [a, command_line](bool check_only) { return run_gemm(*a, check_only, command_line); }};
}

struct ConvArgs {
  cases::ConvProblem conv;
  std::int64_t stride = 1, pad = 0, dilation = 1;
  CLI::Option *stride_opt = nullptr, *pad_opt = nullptr, *dilation_opt = nullptr;
  std::string layout = "nchw", activation = "none";
  std::map<std::string, Activation> activations;
  MeasureArgs measure;
  OutputArgs output;
};

int run_conv(ConvArgs& a, bool check_only, const std::string& command_line) {
  Conv2dParams& cp = a.conv.params;
  checking_arguments([&] {
    a.conv.dtype = parse_dtype(a.output.dtype);
    if (a.stride_opt->count()) cp.stride = {a.stride, a.stride};
    if (a.pad_opt->count()) cp.pad = {a.pad, a.pad, a.pad, a.pad};
    if (a.dilation_opt->count()) cp.dilation = {a.dilation, a.dilation};
    cp.layout = a.layout == "nhwc" ? Layout::NHWC : Layout::NCHW;
    cp.activation = a.activations.at(a.activation);
    cases::conv_shape_graph(a.conv);  // the shapes alone, as run_gemm
  });
  if (check_only) return 0;
  const std::vector<Problem> problems =
      checking_arguments([&] { return std::vector{conv_problem(a.conv, a.measure.seed)}; });
  return run_problems(problems, a.measure, a.output, command_line);
}

// The geometry options of conv: strides, padding and dilation, each for both dimensions or one.
void add_geometry_options(CLI::App* cmd, ConvArgs& a) {
  auto& cp = a.conv.params;
  a.stride_opt = cmd->add_option("--stride", a.stride, "Stride, both dimensions")->check(positive);
  auto* stride_h = cmd->add_option("--stride-h", cp.stride[0], "Vertical stride")->check(positive);
  auto* stride_w = cmd->add_option("--stride-w", cp.stride[1], "Horizontal stride")->check(positive);
  a.stride_opt->excludes(stride_h)->excludes(stride_w);
  a.pad_opt = cmd->add_option("--pad", a.pad, "Padding, all four sides")->check(non_negative);
  for (auto [name, value] : {std::pair{"--pad-top", &cp.pad[0]}, {"--pad-left", &cp.pad[1]},
                             {"--pad-bottom", &cp.pad[2]}, {"--pad-right", &cp.pad[3]}})
    a.pad_opt->excludes(cmd->add_option(name, *value, "Padding on one side")->check(non_negative));
  a.dilation_opt = cmd->add_option("--dilation", a.dilation, "Dilation, both dimensions")->check(positive);
  a.dilation_opt->excludes(cmd->add_option("--dilation-h", cp.dilation[0], "Vertical dilation")->check(positive));
  a.dilation_opt->excludes(cmd->add_option("--dilation-w", cp.dilation[1], "Horizontal dilation")->check(positive));
}

Command add_conv_command(CLI::App& app, const std::string& command_line) {
  auto a = args_for<ConvArgs>();
  cases::ConvProblem& conv = a->conv;
  auto* cmd = app.add_subcommand("conv", "Time a 2-D convolution: NCHW (or NHWC) input, KxC/GxRxS weights");
  for (auto [name, value, what] : {std::tuple{"--n", &conv.n, "Batch"}, {"--c", &conv.c, "Input channels"},
                                   {"--h", &conv.h, "Input height"}, {"--w", &conv.w, "Input width"},
                                   {"--k", &conv.k, "Output channels"}, {"--r", &conv.r, "Filter height"},
                                   {"--s", &conv.s, "Filter width"}})
    cmd->add_option(name, *value, what)->required()->check(positive);
  add_geometry_options(cmd, *a);
  cmd->add_option("--groups", conv.params.groups, "Groups (C for depthwise)")->check(positive)->capture_default_str();
  cmd->add_option("--layout", a->layout, "How x and y are stored: nchw, or nhwc (channels last)")
      ->check(CLI::IsMember({"nchw", "nhwc"}))->capture_default_str();
  cmd->add_flag("--bias", conv.bias, "Add a bias per output channel, in the conv's epilogue");
  for (const Activation act : {Activation::None, Activation::Relu, Activation::Relu6, Activation::Sigmoid,
                               Activation::Silu, Activation::Tanh, Activation::Gelu})
    a->activations.emplace(to_string(act), act);
  cmd->add_option("--activation", a->activation, "Activation in the conv's epilogue")
      ->check(CLI::IsMember(a->activations))->capture_default_str();
  add_output_options(cmd, a->output);
  add_measure_options(cmd, a->measure);
  return {cmd, [a, command_line](bool check_only) { return run_conv(*a, check_only, command_line); }};
}

struct RunArgs {
  SuiteArgs suite;
  MeasureArgs measure;
};

Command add_run_command(CLI::App& app, const std::string& command_line) {
  auto a = args_for<RunArgs>();
  SuiteArgs& suite = a->suite;
  auto* run = app.add_subcommand("run", "Run a suite on every device, verified; write JSON, CSV and an HTML report");
  auto* suite_opt = run->add_option("--suite", suite.request.name,
                                    fmt::format("Suite to run: {}", fmt::join(suite_names(), ", ")))
                        ->check(CLI::IsMember(suite_names()))->capture_default_str();
  auto* workload_opt =
      run->add_option("--workload", suite.request.workload_file, "Run the problems of a CSV file (columns as bench/workloads/)")
          ->excludes(suite_opt);
  run->add_option("--batch", suite.request.conv_batches, "With --workload: run its convs at each batch, comma-separated")
      ->delimiter(',')->check(CLI::PositiveNumber)->needs(workload_opt);
  run->add_option("--layout", suite.layouts, "With --workload: store its convs' x and y nchw and/or nhwc, comma-separated")
      ->delimiter(',')->check(CLI::IsMember({"nchw", "nhwc"}))->needs(workload_opt);
  run->add_option("--dtype", suite.dtypes, "Dtypes for gemm, conv, peak and --workload, comma-separated")->delimiter(',');
  run->add_option("--out", suite.out, "Results folder (default: ./porta-results/<UTC timestamp>)");
  run->add_option("--budget", suite.options.budget_s, "Seconds for the whole suite; what is left is skipped (0: none)")
      ->check(non_negative_seconds)->capture_default_str();
  run->add_option("--verify-limit", suite.options.verify_limit_s,
                  "Seconds ref may take to check a row; beyond, the cpu device checks other devices' rows and "
                  "oneDNN's gradients")
      ->check(non_negative_seconds)->capture_default_str();
  run->add_option("--peaks", suite.peaks, "Take the devices' ceilings from an earlier results.json (of --suite peak)");
  run->add_option("--rank-timeout", suite.rank_timeout_s,
                  "Under mpirun or srun: seconds rank 0 waits for the other ranks' rows before it ends the job")
      ->check(positive_seconds)->capture_default_str();
  add_measure_options(run, a->measure);
  return {run, [a, command_line](bool check_only) {
            if (!check_only) return run_suite(a->suite, a->measure, command_line);
            for (const std::string& d : a->suite.dtypes) check_dtype(d);
            return 0;
          }};
}

struct ModelArgs {
  std::vector<std::string> names;
  std::vector<std::int64_t> batches{1};
  std::vector<std::int64_t> seqs{128};
  std::vector<std::string> layouts{"device"};
  bool no_torch = false, no_ort = false, profile = false;
  MeasureArgs measure;
  OutputArgs output;
};

int run_model_command(const ModelArgs& a, const std::string& command_line) {
  const MeasureArgs& m = a.measure;
  const OutputArgs& o = a.output;
  std::vector<std::optional<Layout>> layouts;
  for (const std::string& name : a.layouts)
    layouts.push_back(name == "nchw" ? std::optional(Layout::NCHW) : name == "nhwc" ? std::optional(Layout::NHWC) : std::nullopt);
  const std::vector<Problem> problems = checking_arguments([&] {
    std::vector<Problem> list;
    for (const std::string& name : a.names)
      for (const std::int64_t batch : a.batches)
        for (const std::int64_t seq : a.seqs) {
          list.push_back(model_problem(name, batch, parse_dtype(o.dtype), m.seed, seq));
          if (!name.starts_with("bert")) break;  // only BERT takes a sequence length
        }
    return list;
  });
  const std::vector<Target> targets = prepare_targets(m, {o.json, o.csv});
  const std::vector<Row> rows =
      run_models(problems, targets, settings_from(m, o.verify), layouts, {.torch = !a.no_torch, .ort = !a.no_ort},
                 a.profile);
  fmt::print("\n");
  print_model_summary(stdout, rows);
  if (!o.json.empty()) write_json(o.json, environment(infos_of(targets), command_line), rows);
  if (!o.csv.empty()) write_csv(o.csv, rows);
  return finish(rows);
}

std::vector<std::string> known_models() {
  std::vector<std::string> names;
  for (const models::ModelInfo& m : models::available()) names.push_back(m.name);
  return names;
}

Command add_model_command(CLI::App& app, const std::string& command_line) {
  auto a = args_for<ModelArgs>();
  const std::vector<std::string> known = known_models();
  auto* cmd = app.add_subcommand("model", "Time whole networks: latency, images/s, planned peak memory");
  cmd->add_option("--name", a->names, fmt::format("Models, comma-separated: {}", fmt::join(known, ", ")))
      ->required()->delimiter(',')->check(CLI::IsMember(known));
  cmd->add_option("--batch", a->batches, "Batch sizes, comma-separated")->delimiter(',')->check(positive)
      ->capture_default_str();
  cmd->add_option("--seq", a->seqs, "BERT's sequence lengths, comma-separated")->delimiter(',')->check(positive)
      ->capture_default_str();
  cmd->add_option("--layout", a->layouts,
                  "Conv layouts to run side by side, comma-separated: device (the device's choice), nchw, nhwc")
      ->delimiter(',')->check(CLI::IsMember({"device", "nchw", "nhwc"}))->capture_default_str();
  cmd->add_flag("--no-torch", a->no_torch, "Skip the PyTorch eager reference beside each cpu device");
  cmd->add_flag("--no-ort", a->no_ort, "Skip the ONNX Runtime reference beside each cpu device");
  cmd->add_flag("--profile", a->profile, "Print where each run's time goes, by kind of node");
  add_output_options(cmd, a->output);
  add_measure_options(cmd, a->measure);
  return {cmd, [a, command_line](bool check_only) {
            if (!check_only) return run_model_command(*a, command_line);
            check_dtype(a->output.dtype);
            return 0;
          }};
}

struct FitArgs {
  std::string model, device = "cpu", dtype = "f32";
  std::uint64_t memory = 0;
};

int run_fit_command(const FitArgs& a) {
  const std::string& model = a.model;
  const std::string& dtype_name = a.dtype;
  const std::uint64_t memory = a.memory;
  const auto [device, dtype] =
      checking_arguments([&] { return std::pair{Device::open(a.device), parse_dtype(dtype_name)}; });
  const DeviceInfo& info = device.info();
  const std::uint64_t budget = memory > 0 ? memory : info.memory_free;
  if (budget == 0) throw ArgumentError(fmt::format("{} does not report its free memory: give --memory BYTES", info.spec));
  const Fit fit = fit_batch(model, device, dtype, budget);
  constexpr double mib = 1 << 20;
  const MemoryEstimate& e = fit.at_batch;
  fmt::print("{} ({}) on {}: budget {:.1f} MiB ({})\n", model, dtype_name, info.spec, budget / mib,
             memory > 0 ? "--memory" : "the device's free memory");
  if (fit.batch == 0) {
    fmt::print("does not fit even at batch 1: its plan needs {:.1f} MiB ({:.1f} activations + {:.1f} weights)\n",
               e.peak_bytes() / mib, e.arena_bytes / mib, e.constant_bytes / mib);
    return 1;
  }
  fmt::print("largest batch: {}\nplanned peak: {:.1f} MiB ({:.1f} activations + {:.1f} weights; {:.1f} MiB of "
             "activations without reuse)\n",
             fit.batch, e.peak_bytes() / mib, e.arena_bytes / mib, e.constant_bytes / mib, e.naive_arena_bytes / mib);
  return 0;
}

Command add_fit_command(CLI::App& app) {
  auto a = args_for<FitArgs>();
  auto* cmd = app.add_subcommand("fit", "Find the largest batch whose planned memory fits the device");
  cmd->add_option("--model", a->model, "Model")->required()->check(CLI::IsMember(known_models()));
  cmd->add_option("--device", a->device, "Device spec")->capture_default_str();
  cmd->add_option("--dtype", a->dtype, "Storage dtype: f32, f16 or bf16")->capture_default_str();
  cmd->add_option("--memory", a->memory, "Budget in bytes (default: the device's free memory)")
      ->check(number_check<std::uint64_t>(0, false, "BYTES"));
  return {cmd, [a](bool check_only) {
            if (!check_only) return run_fit_command(*a);
            check_dtype(a->dtype);
            return 0;
          }};
}

struct ExportArgs {
  std::string model, out;
  std::int64_t batch = 1;
  std::uint64_t seed = MeasureArgs{}.seed;
};

Command add_export_command(CLI::App& app) {
  auto a = args_for<ExportArgs>();
  auto* cmd = app.add_subcommand("export", "Write a model as the .onnx file ONNX Runtime runs beside porta");
  cmd->add_option("--model", a->model, "Model")->required()->check(CLI::IsMember(known_models()));
  cmd->add_option("--batch", a->batch, "Batch size")->check(positive)->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of the weights, as `model --seed`")->capture_default_str();
  cmd->add_option("--out", a->out, "The .onnx file to write")->required();
  return {cmd, [a](bool check_only) {
            if (check_only) return 0;
            onnx::save(models::build(a->model, {.batch = a->batch, .seed = a->seed}), a->out);
            fmt::print("{} batch {} -> {}\n", a->model, a->batch, a->out);
            return 0;
          }};
}

// The commands whose options and work live in files of their own (tune.cpp, report.cpp,
// compare.cpp); they read files or a device, so a check stops before them.
Command add_tune(CLI::App& app) {
  auto a = args_for<TuneArgs>();
  return {add_tune_command(app, *a), [a](bool check_only) { return check_only ? 0 : run_tune(*a); }};
}

Command add_report(CLI::App& app) {
  auto a = args_for<ReportArgs>();
  return {add_report_command(app, *a), [a](bool check_only) {
            return check_only ? 0 : checking_arguments([&] { return run_report(*a); });
          }};
}

Command add_train(CLI::App& app, const std::string& command_line) {
  auto a = args_for<TrainArgs>();
  return {add_train_command(app, *a), [a, command_line](bool check_only) {
            return check_only ? 0 : checking_arguments([&] { return run_train(*a, command_line); });
          }};
}

Command add_compare(CLI::App& app) {
  auto a = args_for<CompareArgs>();
  return {add_compare_command(app, *a), [a](bool check_only) {
            return check_only ? 0 : checking_arguments([&] { return run_compare(*a); });
          }};
}

// comm needs MPI (a job of one where no launcher started it); only rank 0 makes the results folder.
Command add_comm(CLI::App& app, const std::string& command_line) {
  auto a = args_for<CommArgs>();
  return {add_comm_command(app, *a), [a, command_line](bool check_only) {
            if (check_only) return 0;
            Cluster& job = cluster(true);
            return run_comm(*a, job, job.rank() == 0 ? results_folder(a->out) : std::filesystem::path(), command_line);
          }};
}

// CLI11 would only say "A subcommand is required" for a misspelt one.
void check_command_name(const CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    commands.push_back(sub->get_name());
  const bool help = args[1] == "-h" || args[1] == "--help";
  if (!help && std::find(commands.begin(), commands.end(), args[1]) == commands.end())
    throw ArgumentError(fmt::format("unknown command '{}' (expected one of: {})", args[1], fmt::join(commands, ", ")));
}

}  // namespace

int run_cli(std::vector<std::string> args, CliMode mode) {
  if (args.size() == 1) args.insert(args.end(), {"run", "--suite", "quick"});  // the default: a quick look
  const std::string command_line = join_command_line(args);
  CLI::App app{"porta-bench: time porta's ops on every device, verified against the reference.\n"
               "With no arguments: porta-bench run --suite quick",
               "porta-bench"};
  app.require_subcommand(1);
  const Command commands[] = {add_devices_command(app),           add_support_command(app),
                              add_gemm_command(app, command_line), add_conv_command(app, command_line),
                              add_run_command(app, command_line),  add_model_command(app, command_line),
                              add_fit_command(app),               add_export_command(app),
                              add_tune(app),                      add_report(app),
                              add_compare(app),                   add_comm(app, command_line),
                              add_train(app, command_line)};
  check_command_name(app, args);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    throw ArgumentError(single_line(e.what()) + " (see --help)");
  }
  // What is left to check needs a device, a file or weights, so a check stops at each command's door.
  for (const Command& command : commands)
    if (app.got_subcommand(command.app)) return command.run(mode == CliMode::CheckOnly);
  return 0;
}

}  // namespace porta::bench
