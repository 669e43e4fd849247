#pragma once
// `porta-bench compare A.json B.json`: how B's runs compare with A's, workload by workload.
#include <optional>
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

// The two rows' median times on one clock: each row's own (`timer`) when both rows used the same
// timer, else both host wall times (`host_median_s`; a file without the field was host-timed, so its
// median_s). `clock` says which: "device-event" or "host". Nullopt times where a row has none.
struct ComparedTimes {
  std::optional<double> a, b;
  std::string clock;
};
ComparedTimes compared_times(const Json& a, const Json& b);

// Prints per-row speed ratios (A's median time over B's: above 1, B is faster) for the rows both
// files ran successfully, and their geometric mean. Returns 0; an unreadable file throws porta::Error.
int run_compare(const CompareArgs& args);

}  // namespace porta::bench
