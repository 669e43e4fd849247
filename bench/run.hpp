#pragma once
// `porta-bench run`: a suite on every target, sized to each device, placed on its roofline,
// written as JSON, CSV and an HTML report.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "peak.hpp"
#include "problems.hpp"
#include "suites.hpp"

namespace porta::bench {

struct SuiteOptions {
  double budget_s = 0.0;                    // wall-clock seconds for the suite's problems; 0: none
  std::map<std::string, Ceilings> ceilings;  // known ceilings by device spec (--peaks); others are measured
  double verify_limit_s = 30.0;              // --verify-limit: ref checks a row only within this (run_rows)
};

// Runs `suite` and writes results.json, results.csv, report.html (and stream-*.csv for the peak
// suite) into `dir`; in a job of several ranks, each runs it on its own targets and rank 0 writes
// every rank's rows. Returns the exit code: 1 when a row (of the files) failed, else 0.
int run_suite(const Suite& suite, const std::vector<Target>& targets, const RunSettings& settings,
              const SuiteOptions& options, const std::filesystem::path& dir, const std::string& command_line,
              Cluster& job);

}  // namespace porta::bench
