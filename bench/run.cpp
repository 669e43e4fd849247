#include "run.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "backward.hpp"
#include "env.hpp"
#include "job.hpp"
#include "models.hpp"
#include "op_cases/verify.hpp"
#include "report.hpp"
#include "train.hpp"

namespace porta::bench {
namespace {

// Seconds per flop of an oracle device (ref, or cpu), from a GEMM and a conv (the slower wins), to
// tell which rows it can verify within the limit. ref's naive kernels slow down per flop as operands
// outgrow the caches, so the probes are large enough for that (a few tenths of a second there).
// Gradient graphs (backward.hpp) have probes of their own: ref's im2col copies and GEMMs over N P Q
// make them several times slower per flop than the forward conv.
double seconds_per_flop(const char* oracle, std::uint64_t seed, bool backward = false) {
  const Device ref = Device::open(oracle);
  double worst = 0.0;
  const cases::ConvProblem conv{.n = 1, .c = 64, .h = 28, .w = 28, .k = 64, .r = 3, .s = 3};
  const std::vector<Problem> probes =
      backward ? std::vector{conv_backward_problem(conv, Gradient::Data), conv_backward_problem(conv, Gradient::Filter)}
               : std::vector{gemm_problem({.m = 256, .n = 256, .k = 256}), conv_problem(conv, seed)};
  for (const Problem& p : probes) {
    Executable exe = ref.compile(p.graph);
    cases::set_random_inputs(exe, p.graph, seed);
    const double start = steady_seconds();
    exe.run();
    worst = std::max(worst, (steady_seconds() - start) / p.flops);
  }
  return worst;
}

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

// Why `problem` is not run on `target`, or empty. Sizes come from the device's free memory and,
// for time, from the best rate seen so far for this op and dtype on the device (else its ceilings).
class Planner {
 public:
  Planner(const TimingPolicy& timing, double budget_s) : timing_(timing), budget_s_(budget_s), start_(steady_seconds()) {}

  std::string skip_reason(const Problem& problem, const Target& target, const Ceilings& ceilings) const {
    if (budget_s_ > 0.0 && steady_seconds() - start_ > budget_s_)
      return fmt::format("the suite's --budget of {:g} s was spent", budget_s_);
    const DeviceInfo& info = target.device->info();
    const double memory = static_cast<double>(info.memory_free ? info.memory_free : info.memory_total);
    if (memory > 0.0 && problem.bytes > 0.8 * memory)
      return fmt::format("needs at least {} of device memory, the device has {} free", gib(problem.bytes), gib(memory));
    const double run_s = estimate_s(problem, target, ceilings);
    if (run_s > timing_.max_time_s)
      return fmt::format("one run would take about {:.1f} s here, more than --max-time {:g} s", run_s, timing_.max_time_s);
    return {};
  }

  void observe(const Row& row) {
    if (row.status == "ok" && row.gflops) {
      double& best = best_gflops_[key(row.device, row.op, row.dtype)];
      best = std::max(best, *row.gflops);
    }
  }

 private:
  static std::string key(const std::string& device, const std::string& op, const std::string& dtype) {
    return device + "|" + op + "|" + dtype;
  }

  double estimate_s(const Problem& problem, const Target& target, const Ceilings& ceilings) const {
    const std::string dtype(to_string(problem.dtype));
    const auto seen = best_gflops_.find(key(target.spec, problem.op, dtype));
    const std::optional<double> rate = seen != best_gflops_.end() ? seen->second : ceilings.gemm_gflops(dtype);
    double s = rate && *rate > 0.0 ? problem.flops / (*rate * 1e9) : 0.0;
    if (const auto bandwidth = ceilings.bandwidth_gbs()) s = std::max(s, problem.bytes / (*bandwidth * 1e9));
    return s;
  }

  TimingPolicy timing_;
  double budget_s_;
  double start_;
  std::map<std::string, double> best_gflops_;
};

Row skipped_row(const Problem& problem, const Target& target, const RunSettings& settings, std::string reason) {
  Row row = row_for(problem, target, settings);
  row.status = "skipped";
  row.reason = std::move(reason);
  return row;
}

// The short probes, unverified, before the suite: enough for % of peak and the roofline. The FMA
// probe runs first, then the others; a GEMM probe runs only while the best rate so far says it
// takes under 50 ms, so a fast device gets the large sizes it needs to reach its peak and a slow
// one is not held up.
Ceilings measure_ceilings(const Target& target, const std::vector<DType>& dtypes, const RunSettings& settings,
                          bool progress) {
  RunSettings probe = with_provider(settings, Provider::Native);
  probe.verify = false;
  probe.timing = {.warmup_s = 0.05, .min_samples = 5, .min_time_s = 0.2, .max_time_s = settings.timing.max_time_s};
  if (progress) fmt::print(stderr, "measuring the ceilings of {} ...\n", target.spec);
  std::vector<Row> rows{fma_probe_row(target), copy_probe_row(target)};
  if (rows.front().status == "failed")  // unsupported is expected where a backend has no probe
    fmt::print(stderr, "porta-bench: the FMA probe failed on {}: {}\n", target.spec, single_line(rows.front().reason));
  for (const Problem& p : peak_problems(false, dtypes)) {
    if (p.op == "gemm") {
      const auto rate = ceilings_from_rows(rows, target.spec, "").gemm_gflops(std::string(to_string(p.dtype)));
      if (rate && p.flops / (*rate * 1e9) > 0.05) continue;
    }
    rows.push_back(run_problem(p, target, probe));
  }
  return ceilings_from_rows(rows, target.spec, "short probes at the start of this run (see `--suite peak`)");
}

std::string safe_file_name(std::string text) {
  for (char& c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return text;
}

// porta-bench's own cost per sample, in two parts: the bookkeeping between samples (overhead_pct of
// host-timed rows) and the clock reads and call inside each sample, timed here on an empty run. The
// launch probe is left out: its sub-microsecond runs are the clock's own scale by design. Rows timed
// by device events are summarized apart: their overhead_pct is the host's wall time beyond the
// device's (launch, wait and bookkeeping).
void print_overhead(const std::vector<Row>& rows, double empty_sample_s) {
  std::vector<double> between, inside, beyond_device;
  for (const Row& row : rows) {
    if (!row.overhead_pct || !row.median_s || *row.median_s <= 0.0 || row.op == "launch") continue;
    if (row.timer == "device-event") {
      beyond_device.push_back(*row.overhead_pct);
      continue;
    }
    between.push_back(*row.overhead_pct);
    inside.push_back(100.0 * empty_sample_s / *row.median_s);
  }
  for (auto* v : {&between, &inside, &beyond_device}) std::sort(v->begin(), v->end());
  const auto median = [](const std::vector<double>& v) { return v[v.size() / 2]; };
  if (!between.empty())
    fmt::print("porta-bench's own time per sample, as % of the sample ({} host-timed rows): between samples median "
               "{:.4f} %, max {:.4f} %; inside a sample ({:.0f} ns) median {:.4f} %, max {:.4f} %\n",
               between.size(), median(between), between.back(), empty_sample_s * 1e9, median(inside), inside.back());
  if (!beyond_device.empty())
    fmt::print("host wall time beyond the device's own time, as % of it ({} device-event rows): median {:.2f} %, "
               "max {:.2f} %\n",
               beyond_device.size(), median(beyond_device), beyond_device.back());
}

}  // namespace

namespace {

// Every problem on every target and provider, in order, the peak suite's probes first; each row
// verified as far as the limits allow.
// The train suite's rows: each network trained on each target, by epoch (train.hpp).
std::vector<Row> training_rows(const Suite& suite, const std::vector<Target>& targets, const RunSettings& settings,
                               bool progress) {
  std::vector<Row> rows;
  std::size_t done = 0;
  for (const Problem& problem : suite.problems)
    for (const Target& target : targets) {
      ++done;
      for (Row& row : train_with_references(problem, target, settings, {})) {
        rows.push_back(std::move(row));
        if (progress) print_progress(rows.back(), done, suite.problems.size() * targets.size());
      }
    }
  return rows;
}

std::vector<Row> run_rows(const Suite& suite, const std::vector<Target>& targets, const RunSettings& settings,
                          const SuiteOptions& options, std::map<std::string, Ceilings>& ceilings, bool progress) {
  if (suite.training) return training_rows(suite, targets, settings, progress);
  std::vector<Row> rows;
  // ref verifies each row it can within the limit. Beyond it, the cpu device, which the tests check
  // against ref, verifies the rows of other devices: with many cores it reaches an H100's largest
  // GEMMs in seconds.
  // A gradient's rows beyond ref's reach are checked against the cpu device's, whatever the time:
  // oneDNN's row against porta's graph; porta's own rows on the cpu backend then go unverified (the
  // unit tests check the graphs against ref).
  const double ref_s_per_flop = seconds_per_flop("ref", settings.seed);
  std::optional<double> cpu_s_per_flop, ref_backward_s_per_flop;  // measured when first needed
  const auto verifying = [&](const Problem& problem, const Target& target) {
    RunSettings these = settings;
    if (is_backward(problem) && !ref_backward_s_per_flop)
      ref_backward_s_per_flop = seconds_per_flop("ref", settings.seed, true);
    const double ref_s = problem.flops * (is_backward(problem) ? *ref_backward_s_per_flop : ref_s_per_flop);
    if (ref_s <= options.verify_limit_s) return these;
    if (is_backward(problem)) {
      these.oracle = "cpu";
      return these;
    }
    if (target.backend != "cpu") {
      if (!cpu_s_per_flop) cpu_s_per_flop = seconds_per_flop("cpu", settings.seed);
      if (problem.flops * *cpu_s_per_flop <= options.verify_limit_s) {
        these.oracle = "cpu";
        return these;
      }
    }
    these.no_verify_reason = fmt::format("the reference would take about {:.0f} s (limit {:g} s)", ref_s,
                                         options.verify_limit_s);
    return these;
  };
  Planner planner(settings.timing, options.budget_s);
  const std::size_t total =
      suite.problems.size() * targets.size() * settings.providers.size() + (suite.is_peak ? 2 * targets.size() : 0);
  if (suite.is_peak)
    for (const Target& t : targets) {
      rows.push_back(fma_probe_row(t));
      rows.push_back(copy_probe_row(t));
    }
  for (const Problem& problem : suite.problems) {
    for (const Target& target : targets) {
      const RunSettings these = verifying(problem, target);
      const std::string skip = target.device ? planner.skip_reason(problem, target, ceilings[target.spec]) : "";
      std::vector<Row> timed;
      if (skip.empty()) {
        timed = run_providers(problem, target, these);
      } else {
        for (const Provider provider : settings.providers)
          timed.push_back(skipped_row(problem, target, with_provider(these, provider), skip));
      }
      if (suite.references && skip.empty())
        for (Row& row : reference_rows(problem, target, these, {}, false)) timed.push_back(std::move(row));
      for (Row& row : timed) {
        planner.observe(row);
        rows.push_back(std::move(row));
        if (progress) print_progress(rows.back(), rows.size(), total);
      }
    }
  }
  return rows;
}

// The job's summary at rank 0: a line per other rank, since only rank 0's own rows are in its table.
void print_ranks(const Json& doc) {
  const Json& env = doc["env"];
  if (!env.contains("ranks")) return;
  for (const Json& rank_env : env["ranks"]) {
    const int rank = rank_env.value("rank", 0);
    int count = 0, failed = 0;
    for (const Json& row : doc["results"])
      if (row.value("rank", -1) == rank) ++count, failed += row.value("status", "") == "failed";
    fmt::print("rank {} ({}): {} rows, {} failed\n", rank, rank_env.value("hostname", ""), count, failed);
  }
}

// The results folder's files (JSON, CSV, the report; the peak suite's BabelStream CSV), and the
// tables and the timing overhead on stdout; in a job of several ranks, every rank's rows gathered
// into rank 0's files. Returns 1 when a row of the files failed.
int write_results(const Suite& suite, const std::vector<Target>& targets, const SuiteOptions& options,
                  const std::map<std::string, Ceilings>& ceilings, const std::vector<Row>& rows,
                  const std::filesystem::path& dir, const std::string& command_line, Cluster& job) {
  std::vector<DeviceInfo> infos;
  for (const Target& t : targets)
    if (t.device) infos.push_back(t.device->info());
  Json env = environment(infos, command_line);
  env["suite"] = suite.name;
  env["verify_limit_s"] = options.verify_limit_s;
  for (Json& d : env["devices"])
    if (const auto it = ceilings.find(d["spec"].get<std::string>()); it != ceilings.end())
      d["ceilings"] = to_json(it->second);
  const double empty_sample_s =
      measure([] { return std::optional<double>(); }, {.warmup_s = 0.0, .min_samples = 10000, .min_time_s = 0.0, .max_time_s = 1.0}).median_s;
  env["empty_sample_s"] = empty_sample_s;
  const std::optional<Json> doc = gather_document(job, env, rows);
  if (!doc) return any_failed(rows) ? 1 : 0;  // rank 0 writes the files

  fmt::print("\n");
  print_table(stdout, rows);
  if (targets.size() > 1) {
    fmt::print("\n");
    print_comparison(stdout, rows);
  }
  print_ranks(*doc);
  fmt::print("\n");
  print_overhead(rows, empty_sample_s);

  const std::filesystem::path json = dir / "results.json", csv = dir / "results.csv", html = dir / "report.html";
  write_json(json, *doc);
  write_csv(csv, (*doc)["results"]);
  write_report({{"results.json", *doc}}, html);
  fmt::print("\nResults: {}\n         {}\nReport:  {}\n", json.string(), csv.string(), html.string());
  if (suite.is_peak)
    for (const Target& t : targets) {
      const std::filesystem::path stream = dir / fmt::format("stream-{}.csv", safe_file_name(t.spec));
      write_babelstream_csv(stream, rows, t.spec);
      fmt::print("Stream:  {} (BabelStream CSV)\n", stream.string());
    }
  for (const Json& row : (*doc)["results"])
    if (row.value("status", "") == "failed") return 1;
  return 0;
}

}  // namespace

int run_suite(const Suite& suite, const std::vector<Target>& targets, const RunSettings& settings,
              const SuiteOptions& options, const std::filesystem::path& dir, const std::string& command_line,
              Cluster& job) {
  const bool progress = isatty(fileno(stderr)) != 0;
  std::vector<std::string> specs;
  for (const Target& t : targets) specs.push_back(t.spec);
  fmt::print(stderr, "porta-bench: suite '{}': {} problems on {}\n", suite.name, suite.problems.size(),
             fmt::join(specs, ", "));
  std::map<std::string, Ceilings> ceilings = options.ceilings;
  if (!suite.is_peak && !suite.training)  // training rows have no rate to place under a ceiling
    for (const Target& t : targets)
      if (t.device && !ceilings.count(t.spec)) ceilings[t.spec] = measure_ceilings(t, suite.dtypes, settings, progress);
  std::vector<Row> rows = run_rows(suite, targets, settings, options, ceilings, progress);
  if (suite.is_peak)
    for (const Target& t : targets) ceilings[t.spec] = ceilings_from_rows(rows, t.spec, "the peak suite in this run");
  for (Row& row : rows)
    if (const auto it = ceilings.find(row.device); it != ceilings.end()) place_on_roofline(row, it->second);
  return write_results(suite, targets, options, ceilings, rows, dir, command_line, job);
}

}  // namespace porta::bench
