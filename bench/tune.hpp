#pragma once
// porta-bench tune: measures a device's tunable kernel parameters and stores the fastest, which
// every later process on that device uses.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace porta::bench {

struct TuneArgs {
  std::string device = "opencl:0";
  std::int64_t m = 1024, n = 1024, k = 1024;
};

CLI::App* add_tune_command(CLI::App& app, TuneArgs& args);
int run_tune(const TuneArgs& args);

}  // namespace porta::bench
