#pragma once
// Result files from one machine or many, read back and merged into platforms and their points: what
// `porta-bench report` renders as an HTML page (report.hpp) or a markdown standings page (standings.hpp).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "peak.hpp"
#include "results.hpp"

namespace porta::bench {

struct ResultsInput {
  std::string name;  // how the page refers to it (the path as given)
  Json doc;          // a porta-bench/1 document
};

// One device of one input file: the unit the pages compare.
struct Platform {
  std::size_t input = 0;  // which of the inputs
  std::string label;
  std::string spec, backend, name, arch, host;
  int threads = 0;  // the device's, from the file's env (0 where it has no entry)
  Ceilings ceilings;
};

// One result row, reduced to what the pages show.
struct Point {
  std::size_t platform;
  std::string op, workload, impl, algo, problem, status, reason;
  Json params;
  std::optional<double> gflops, ai, pct_peak, median_s;
  std::optional<bool> verified;
  std::string dtype;
  std::string effective;  // why the rate is an effective one (effective_rate_reason), or empty
};

struct Merged {
  std::vector<Platform> platforms;
  std::vector<Point> points;
  std::vector<std::string> problems;  // compute problems ("op workload dtype") in first-seen order
};

// The rows of every input but the ceilings' probes (their numbers are the ceilings); a platform per
// device of each input, labelled by spec, and where two inputs share a spec by host, else by file.
Merged merge(const std::vector<ResultsInput>& inputs);

}  // namespace porta::bench
