#include "problems.hpp"

#include <algorithm>

#include <fmt/core.h>
#include <fmt/format.h>

#include "backward.hpp"
#include "openblas.hpp"

namespace porta::bench {
namespace {

std::string backend_of(std::string_view spec) { return std::string(spec.substr(0, spec.find(':'))); }

std::vector<std::string> split_specs(const std::vector<std::string>& args) {
  std::vector<std::string> specs;
  for (const std::string& arg : args) {
    std::size_t pos = 0;
    while (pos <= arg.size()) {
      const std::size_t comma = std::min(arg.find(',', pos), arg.size());
      const std::string piece = arg.substr(pos, comma - pos);
      const std::size_t eq = piece.find('='), colon = piece.find(':');
      const bool option_only = eq != std::string::npos && (colon == std::string::npos || eq < colon);
      if (option_only && !specs.empty()) specs.back() += "," + piece;
      else specs.push_back(piece);  // an empty piece is left for Device::open to reject clearly
      pos = comma + 1;
    }
  }
  return specs;
}

// The plans the problem's nodes reported on the first run, "; " between distinct ones.
std::string algo_of(const Executable& exe) {
  std::vector<std::string> plans;
  for (const NodePlan& node : exe.node_plans())
    if (!node.plan.empty() && std::find(plans.begin(), plans.end(), node.plan) == plans.end()) plans.push_back(node.plan);
  return fmt::format("{}", fmt::join(plans, "; "));
}

void clear_speed(Row& row) {
  row.samples = 0;
  row.median_s = row.min_s = row.p90_s = row.mean_s = row.max_s = row.gflops = row.gbs = std::nullopt;
  row.host_median_s = row.host_min_s = std::nullopt;
}

}  // namespace

// Each input, weight and output moved once: the least traffic any implementation can get away with.
double minimum_bytes(const Graph& graph) {
  double bytes = 0.0;
  for (const TensorInfo& t : graph.tensors())
    if (t.role == Role::Input || t.role == Role::Constant) bytes += static_cast<double>(t.desc.bytes());
  for (const auto& [name, tensor] : graph.outputs()) bytes += static_cast<double>(graph.desc(tensor).bytes());
  return bytes;
}

std::string gemm_label(const cases::GemmProblem& p) {
  std::string label = fmt::format("{}x{}x{}", p.m, p.n, p.k);
  if (p.trans_a || p.trans_b) label += fmt::format(" {}{}", p.trans_a ? 'T' : 'N', p.trans_b ? 'T' : 'N');
  if (p.batch > 1) label += fmt::format(" b{}", p.batch);
  return label;
}

std::string conv_label(const cases::ConvProblem& p) {
  const Conv2dParams& c = p.params;
  std::string label = fmt::format("{}x{}x{}x{} k{} {}x{}", p.n, p.c, p.h, p.w, p.k, p.r, p.s);
  if (c.stride[0] != 1 || c.stride[1] != 1)
    label += c.stride[0] == c.stride[1] ? fmt::format(" /{}", c.stride[0])
                                        : fmt::format(" /{}x{}", c.stride[0], c.stride[1]);
  const auto& pad = c.pad;  // top, left, bottom, right
  if (pad[0] == pad[1] && pad[1] == pad[2] && pad[2] == pad[3]) {
    if (pad[0] != 0) label += fmt::format(" p{}", pad[0]);
  } else {
    label += fmt::format(" p{},{},{},{}", pad[0], pad[1], pad[2], pad[3]);
  }
  if (c.dilation[0] != 1 || c.dilation[1] != 1)
    label += c.dilation[0] == c.dilation[1] ? fmt::format(" d{}", c.dilation[0])
                                            : fmt::format(" d{}x{}", c.dilation[0], c.dilation[1]);
  if (c.groups != 1) label += fmt::format(" g{}", c.groups);
  if (c.layout != Layout::NCHW) label += fmt::format(" {}", to_string(c.layout));
  if (p.bias) label += " +bias";
  if (c.activation != Activation::None) label += fmt::format(" {}", to_string(c.activation));
  return label;
}

Problem gemm_problem(const cases::GemmProblem& p, std::string workload) {
  Problem problem{.op = "gemm",
                  .kind = OpKind::Gemm,
                  .workload = workload.empty() ? gemm_label(p) : std::move(workload),
                  .params = Json{{"m", p.m}, {"n", p.n}, {"k", p.k}, {"batch", p.batch},
                                 {"trans_a", p.trans_a}, {"trans_b", p.trans_b}},
                  .dtype = p.dtype,
                  .graph = cases::gemm_graph(p)};
  problem.flops = cases::gemm_flops(p);
  problem.bytes = minimum_bytes(problem.graph);
  return problem;
}

Problem conv_problem(const cases::ConvProblem& p, std::uint64_t seed, std::string workload) {
  const Conv2dParams& c = p.params;
  Problem problem{.op = "conv2d",
                  .kind = OpKind::Conv2d,
                  .workload = workload.empty() ? conv_label(p) : std::move(workload),
                  .params = Json{{"n", p.n}, {"c", p.c}, {"h", p.h}, {"w", p.w}, {"k", p.k}, {"r", p.r},
                                 {"s", p.s}, {"stride_h", c.stride[0]}, {"stride_w", c.stride[1]},
                                 {"pad_top", c.pad[0]}, {"pad_left", c.pad[1]}, {"pad_bottom", c.pad[2]},
                                 {"pad_right", c.pad[3]}, {"dilation_h", c.dilation[0]},
                                 {"dilation_w", c.dilation[1]}, {"groups", c.groups},
                                 {"layout", to_string(c.layout)}, {"bias", p.bias},
                                 {"activation", to_string(c.activation)}},
                  .dtype = p.dtype,
                  .graph = cases::conv_graph(p, seed)};
  const Shape& out = problem.graph.shape(problem.graph.outputs().front().second);
  const bool nhwc = c.layout == Layout::NHWC;
  problem.params["p"] = out.at(nhwc ? 1 : 2);
  problem.params["q"] = out.at(nhwc ? 2 : 3);
  problem.flops = cases::conv_flops(p);
  problem.bytes = minimum_bytes(problem.graph);
  return problem;
}

std::vector<Target> open_targets(const std::vector<std::string>& spec_args) {
  std::vector<std::string> specs = split_specs(spec_args);
  if (specs.empty())
    for (const DeviceInfo& info : devices()) specs.push_back(info.spec);
  std::vector<Target> targets;
  for (const std::string& spec : specs) {
    Target target{.spec = spec, .backend = backend_of(spec)};
    try {
      target.device = Device::open(spec);
      target.spec = target.device->info().spec;
      target.backend = target.device->info().backend;
    } catch (const Error& e) {
      // A spec that names nothing is the caller's mistake; a device that is absent is a result.
      if (e.code() == ErrorCode::InvalidArgument || e.code() == ErrorCode::NotFound) throw;
      target.error = e.what();
    }
    targets.push_back(std::move(target));
  }
  return targets;
}

std::string_view to_string(Provider provider) {
  switch (provider) {
    case Provider::Native: return "native";
    case Provider::Vendor: return "vendor";
    case Provider::OpenBlas: return "openblas";
  }
  return "?";
}

RunSettings with_provider(RunSettings settings, Provider provider) {
  settings.provider = provider;
  settings.compile.impl = provider == Provider::Vendor ? Impl::Vendor : Impl::Native;
  return settings;
}

Row row_for(const Problem& problem, const Target& target, const RunSettings& settings) {
  return {.op = problem.op, .workload = problem.workload, .params = problem.params, .device = target.spec,
          .backend = target.backend, .impl = std::string(to_string(settings.provider)),
          .dtype = std::string(to_string(problem.dtype)), .tf32 = settings.compile.allow_tf32,
          .flops = problem.flops, .bytes = problem.bytes, .seed = settings.seed};
}

void record_timing(Row& row, const Timing& timing, const Problem& problem) {
  row.timer = timing.timer;
  row.samples = static_cast<int>(timing.samples.size());
  row.median_s = timing.median_s;
  row.min_s = timing.min_s;
  row.p90_s = timing.p90_s;
  row.mean_s = timing.mean_s;
  row.max_s = timing.max_s;
  row.host_median_s = timing.host_median_s;
  row.host_min_s = timing.host_min_s;
  row.overhead_pct = timing.overhead * 100.0;
  if (timing.median_s > 0.0) {  // a run below the clock's resolution has no meaningful rate
    if (problem.flops > 0.0) row.gflops = problem.flops / timing.median_s * 1e-9;
    row.gbs = problem.bytes / timing.median_s * 1e-9;
  }
}

void record_verification(Row& row, const cases::Verification& v) {
  row.verified = v.passed;
  row.nmse = v.nmse;
  row.max_abs = v.max_abs;
  if (!v.passed) {
    row.status = "failed";
    row.reason = "verification failed: " + (v.detail.empty() ? fmt::format("nmse {:.3e}", v.nmse) : v.detail);
    clear_speed(row);  // a wrong answer is never reported as a speed
  }
}

void verify_host_output(Row& row, const Problem& problem, std::span<const float> got, const RunSettings& settings) {
  row.oracle = settings.oracle;
  Executable want = Device::open(settings.oracle).compile(problem.graph);
  cases::set_random_inputs(want, problem.graph, settings.seed);
  want.run();
  cases::Verification v{.passed = true};
  const auto& [name, out] = problem.graph.outputs().front();
  cases::check_output(v, name, problem.graph.shape(out), DType::f32, problem.kind, false, got, want.output(name));
  record_verification(row, v);
}

void record_exception(Row& row, const std::exception_ptr& thrown) {
  row.status = "failed";
  try {
    std::rethrow_exception(thrown);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::Unsupported) row.status = "unsupported";
    row.reason = e.what();
  } catch (const std::exception& e) {  // std::bad_alloc for a problem too big for the host, say
    row.reason = e.what();
  } catch (...) {
    row.reason = "an exception that is not a std::exception";
  }
}

namespace {

// Times the prepared runs together, then lets go of them (their executables' memory) before each
// is verified, since verification compiles two more.
std::vector<Row> time_and_verify(std::vector<Prepared> prepared, const Problem& problem, const RunSettings& settings) {
  const std::vector<Timing> timings = [&] {  // the samples' copies of the runs go with this scope
    std::vector<Sample> samples;
    for (const Prepared& p : prepared)
      if (p.sample) samples.push_back(p.sample);
    return measure_rounds(samples, settings.timing);
  }();
  std::vector<Row> rows;
  std::size_t timed = 0;
  for (Prepared& p : prepared) {
    if (p.sample) {
      const Timing& timing = timings[timed++];
      if (timing.error) {
        record_exception(p.row, timing.error);
      } else {
        record_timing(p.row, timing, problem);
      }
    }
    p.sample = nullptr;
  }
  for (Prepared& p : prepared) {
    if (p.verify && settings.verify && p.row.status == "ok") {
      if (settings.no_verify_reason.empty()) {
        p.verify(p.row);
      } else {
        p.row.reason = "not verified: " + settings.no_verify_reason;
      }
    }
    rows.push_back(std::move(p.row));
  }
  return rows;
}

}  // namespace

Prepared outside_run(const Problem& problem, const Target& target, const RunSettings& settings,
                     const std::string& unsupported) {
  Prepared p{.row = row_for(problem, target, settings)};
  if (!unsupported.empty()) {
    p.row.status = "unsupported";
    p.row.reason = unsupported;
  } else if (!target.device) {
    p.row.status = "failed";
    p.row.reason = target.error;
  }
  return p;
}

Prepared prepare_problem(const Problem& problem, const Target& target, const RunSettings& settings) {
  if (settings.provider == Provider::OpenBlas) return prepare_openblas(problem, target, settings);
  if (settings.provider == Provider::Vendor && is_backward(problem))
    return prepare_onednn_backward(problem, target, settings);
  Prepared p{.row = row_for(problem, target, settings)};
  if (!target.device) {
    p.row.status = "failed";
    p.row.reason = target.error;
    return p;
  }
  const Device& device = *target.device;
  try {
    const double start = steady_seconds();
    auto exe = std::make_shared<Executable>(device.compile(problem.graph, settings.compile));
    p.row.compile_s = steady_seconds() - start;
    cases::set_random_inputs(*exe, problem.graph, settings.seed);
    const double first = steady_seconds();
    exe->run();
    p.row.first_run_s = *p.row.compile_s + (steady_seconds() - first);
    p.row.algo = algo_of(*exe);
    p.sample = [exe] {
      exe->run();
      return device_seconds(*exe);
    };
  } catch (...) {
    record_exception(p.row, std::current_exception());
    return p;
  }
  if (settings.oracle == "cpu" && target.backend == "cpu") {  // a gradient beyond ref's reach (run_rows)
    p.verify = [](Row& row) {
      row.reason = "not verified: ref would take minutes at this size, and the cpu device would check its own "
                   "result (the bench tests check these graphs against ref on small shapes; oneDNN's row beside "
                   "this one is checked against its result)";
    };
    return p;
  }
  p.verify = [&problem, &device, settings](Row& row) {
    try {
      row.oracle = settings.oracle;
      record_verification(row, cases::verify_against(problem.graph, device, Device::open(settings.oracle), problem.kind,
                                                     settings.seed, settings.compile));
    } catch (const std::exception& e) {
      row.verified = false;
      row.status = "failed";
      row.reason = std::string("verification could not run: ") + e.what();
      clear_speed(row);
    }
  };
  return p;
}

Row run_problem(const Problem& problem, const Target& target, const RunSettings& settings) {
  std::vector<Prepared> one;
  one.push_back(prepare_problem(problem, target, settings));
  return time_and_verify(std::move(one), problem, settings).front();
}

std::vector<Row> run_providers(const Problem& problem, const Target& target, const RunSettings& settings) {
  double memory = 0.0;
  int threads = 1;
  if (target.device) {
    const DeviceInfo& info = target.device->info();
    memory = static_cast<double>(info.memory_free ? info.memory_free : info.memory_total);
    threads = info.threads;
  }
  const std::vector<Provider>& providers = settings.providers;
  const bool fit = memory <= 0.0 || problem.bytes * static_cast<double>(providers.size()) <= 0.8 * memory;
  // OpenBLAS's idle threads keep spinning and yielding for about 0.1 s after each call, longer
  // than a turn: with them in turns on 2 threads, oneDNN's median 300x200x100 took 8 ms, not
  // 0.3, in two invocations of six. On more than one thread it runs on its own.
  std::vector<std::size_t> in_turns, alone;
  for (std::size_t i = 0; i < providers.size(); ++i)
    (fit && !(providers[i] == Provider::OpenBlas && threads > 1) ? in_turns : alone).push_back(i);
  std::vector<Prepared> prepared;
  for (const std::size_t i : in_turns)
    prepared.push_back(prepare_problem(problem, target, with_provider(settings, providers[i])));
  std::vector<Row> timed = time_and_verify(std::move(prepared), problem, settings);
  std::vector<Row> rows(providers.size());
  for (std::size_t k = 0; k < in_turns.size(); ++k) rows[in_turns[k]] = std::move(timed[k]);
  for (const std::size_t i : alone) rows[i] = run_problem(problem, target, with_provider(settings, providers[i]));
  return rows;
}

void print_progress(const Row& row, std::size_t done, std::size_t total) {
  std::string result = row.reason.empty() ? row.status : row.status + ": " + single_line(row.reason);
  if (row.median_s) result = fmt::format("{:.3f} ms", *row.median_s * 1e3);
  if (row.gflops) result += fmt::format(", {:.1f} GFLOP/s", *row.gflops);
  fmt::print(stderr, "[{}/{}] {} {} {} on {} ({}): {}\n", done, total, row.op, row.workload, row.dtype, row.device,
             row.impl, result);
}

std::vector<Row> run_all(const std::vector<Problem>& problems, const std::vector<Target>& targets,
                         const RunSettings& settings, bool progress) {
  std::vector<Row> rows;
  const std::size_t total = problems.size() * targets.size() * settings.providers.size();
  for (const Problem& problem : problems) {
    for (const Target& target : targets) {
      for (Row& timed : run_providers(problem, target, settings)) {
        rows.push_back(std::move(timed));
        if (progress) print_progress(rows.back(), rows.size(), total);
      }
    }
  }
  return rows;
}

bool any_failed(const std::vector<Row>& rows) {
  for (const Row& row : rows)
    if (row.status == "failed") return true;
  return false;
}

}  // namespace porta::bench
