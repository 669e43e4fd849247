#include "tune.hpp"

#include <cstdio>

#include <fmt/core.h>

#include "core/runtime/tuning.hpp"

namespace porta::bench {

CLI::App* add_tune_command(CLI::App& app, TuneArgs& args) {
  auto* cmd = app.add_subcommand("tune", "Measure a device's GEMM parameters and store the fastest for later runs");
  cmd->add_option("--device", args.device, "Device spec (only opencl devices have parameters to tune)")
      ->capture_default_str();
  for (auto [name, value, what] : {std::tuple{"--m", &args.m, "Rows of the timed f32 GEMM"},
                                   {"--n", &args.n, "Columns of the timed f32 GEMM"},
                                   {"--k", &args.k, "Inner dimension of the timed f32 GEMM"}})
    cmd->add_option(name, *value, what)->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 16))->capture_default_str();
  return cmd;
}

int run_tune(const TuneArgs& args) {
  detail::TuneSettings settings;
  settings.m = args.m;
  settings.n = args.n;
  settings.k = args.k;
  settings.progress = [](const detail::TuneTrial& t) {
    if (t.error.empty())
      fmt::print("  {:<48} {:>9.3f} ms {:>8.1f} GFLOP/s\n", t.parameters, t.median_s * 1e3, t.gflops);
    else
      fmt::print("  {:<48} failed: {}\n", t.parameters, t.error);
    std::fflush(stdout);
  };
  fmt::print(stderr, "porta-bench: tuning the f32 GEMM {}x{}x{} on {}\n", args.m, args.n, args.k, args.device);
  const detail::TuneReport report = detail::tune_device(args.device, settings);
  const detail::TuneTrial& best = report.trials[report.best];
  fmt::print("\ndevice: {}\nbest:   {} ({:.1f} GFLOP/s)\n", report.device, best.parameters, best.gflops);
  for (const detail::TuneTrial& t : report.trials)
    if (t.parameters == report.previous && t.error.empty())
      fmt::print("before: {} ({:.1f} GFLOP/s, {:.2f}x slower)\n", t.parameters, t.gflops, t.median_s / best.median_s);
  fmt::print("stored: {}\n", report.stored_at);
  return 0;
}

}  // namespace porta::bench
