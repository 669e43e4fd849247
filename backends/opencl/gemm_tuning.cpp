// porta-bench tune on an OpenCL device: times an f32 GEMM with each candidate of GemmTiles,
// through the same compile and run path as any graph, checks each result, and stores the fastest
// for the device (tuned_tiles_file), where every later KernelPrograms finds it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <random>
#include <span>

#include "backends/opencl/backend.hpp"
#include "backends/opencl/program_cache.hpp"
#include "core/compile/compile.hpp"
#include "core/runtime/executable_impl.hpp"
#include "core/runtime/tuning.hpp"
#include "porta/error.hpp"

namespace porta::detail {
namespace {

struct GemmProblem {
  std::int64_t m, n, k;
  std::vector<float> a, b;
  Graph graph;
};

GemmProblem make_problem(const TuneSettings& s) {
  GemmProblem p{s.m, s.n, s.k, {}, {}, {}};
  std::mt19937 random(20261130);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  p.a.resize(static_cast<std::size_t>(s.m * s.k));
  p.b.resize(static_cast<std::size_t>(s.k * s.n));
  for (float& v : p.a) v = value(random);
  for (float& v : p.b) v = value(random);
  p.graph.output("y", p.graph.matmul(p.graph.input("a", {s.m, s.k}), p.graph.input("b", {s.k, s.n})));
  return p;
}

// A wrong candidate must never win: 64 sampled outputs against a double-precision dot product,
// within a bound that grows with the size of the terms summed.
std::string check_result(const GemmProblem& p, std::span<const float> y) {
  std::mt19937 random(7);
  for (int sample = 0; sample < 64; ++sample) {
    const auto i = static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(p.m));
    const auto j = static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(p.n));
    double want = 0.0, magnitude = 0.0;
    for (std::int64_t l = 0; l < p.k; ++l) {
      const double term = double(p.a[static_cast<std::size_t>(i * p.k + l)]) * p.b[static_cast<std::size_t>(l * p.n + j)];
      want += term;
      magnitude += std::abs(term);
    }
    const double got = y[static_cast<std::size_t>(i * p.n + j)];
    if (!(std::abs(got - want) <= 1e-5 * magnitude + 1e-6))
      return "wrong result at [" + std::to_string(i) + ", " + std::to_string(j) + "]: " + std::to_string(got) +
             " instead of " + std::to_string(want);
  }
  return {};
}

TuneTrial measure(const ClDeviceDescription& description, const GemmTiles& tiles, const GemmProblem& p,
                  const TuneSettings& settings) {
  TuneTrial trial{tiles.to_string(), 0.0, 0.0, {}};
  try {
    const std::shared_ptr<DeviceImpl> device = make_opencl_device(description, tiles);
    ExecutableImpl exe(device, compile_graph(p.graph, *device, {}));
    const auto bytes = [](const std::vector<float>& v) { return std::as_bytes(std::span(v)); };
    exe.set_input("a", bytes(p.a), true);
    exe.set_input("b", bytes(p.b), true);
    exe.run();  // builds the program
    const std::vector<std::byte> out = exe.output_bytes("y");
    trial.error = check_result(p, {reinterpret_cast<const float*>(out.data()), out.size() / sizeof(float)});
    if (!trial.error.empty()) return trial;
    std::vector<double> times;
    double total = 0.0;
    while (times.size() < 3 || total < settings.min_time_s) {
      const auto start = std::chrono::steady_clock::now();
      exe.run();
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      total += times.back();
    }
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
    trial.median_s = times[times.size() / 2];
    trial.gflops = 2.0 * double(p.m) * double(p.n) * double(p.k) / trial.median_s * 1e-9;
  } catch (const Error& e) {
    trial.error = e.what();
  }
  return trial;
}

}  // namespace

TuneReport tune_opencl_gemm(const DeviceSpec& spec, const TuneSettings& settings) {
  if (settings.m < 1 || settings.n < 1 || settings.k < 1)
    throw Error(ErrorCode::InvalidArgument, "tune: the GEMM's m, n and k must be positive");
  const ClDeviceDescription description = find_opencl_device(spec);
  const std::optional<std::filesystem::path> cache_dir = default_program_cache_dir();
  if (!cache_dir)
    throw Error(ErrorCode::Unsupported, "tune: no cache directory to store results in (set PORTA_CACHE_DIR, "
                                        "XDG_CACHE_HOME or HOME)");
  TuneReport report;
  report.device = description.info.name;
  report.previous = choose_gemm_tiles(description, cache_dir).to_string();
  const GemmProblem problem = make_problem(settings);
  const auto run_round = [&](const std::vector<GemmTiles>& candidates) {
    for (const GemmTiles& tiles : candidates) {
      report.trials.push_back(measure(description, tiles, problem, settings));
      if (settings.progress) settings.progress(report.trials.back());
    }
  };
  const auto fastest = [&] {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < report.trials.size(); ++i)
      if (report.trials[i].error.empty() && (!best || report.trials[i].median_s < report.trials[*best].median_s)) best = i;
    if (!best) throw Error(ErrorCode::Internal, "tune: no GEMM candidate ran correctly on '" + report.device + "'");
    return *best;
  };

  run_round(gemm_shape_candidates(description));
  const GemmTiles best_shape = *GemmTiles::parse(report.trials[fastest()].parameters);
  run_round(gemm_block_candidates(description, best_shape));
  report.best = fastest();
  const std::filesystem::path file = tuned_tiles_file(*cache_dir, description);
  store_tuned_tiles(file, description, *GemmTiles::parse(report.trials[report.best].parameters));
  report.stored_at = file.string();
  return report;
}

}  // namespace porta::detail
