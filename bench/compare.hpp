#pragma once
// `porta-bench compare A.json B.json`: how B's runs compare with A's, workload by workload.
#include <string>

#include "results.hpp"

namespace CLI {
class App;
}

namespace porta::bench {

struct CompareArgs {
  std::string baseline, candidate;
};
CLI::App* add_compare_command(CLI::App& app, CompareArgs& args);

// Prints per-row speed ratios (A's median time over B's: above 1, B is faster) for the rows both
// files ran successfully, and their geometric mean. Returns 0; an unreadable file throws porta::Error.
int run_compare(const CompareArgs& args);

}  // namespace porta::bench
