#include "compare.hpp"

#include <cmath>
#include <map>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "results_file.hpp"

namespace porta::bench {
namespace {

// Rows are the same measurement when op, workload, dtype, provider and device agree; the device
// is left out when each file ran on one device only and they differ (two machines, or one device
// with two settings): then those two devices are what is compared.
std::string key_of(const Json& row, bool with_device) {
  return fmt::format("{}|{}|{}|{}|{}", text_of(row, "op"), text_of(row, "workload"), text_of(row, "dtype"),
                     text_of(row, "impl"), with_device ? text_of(row, "device") : "");
}

std::set<std::string> devices_of(const Json& doc) {
  std::set<std::string> devices;
  for (const Json& row : doc["results"]) devices.insert(text_of(row, "device"));
  return devices;
}

// Files written before rows carried a timer were timed on the host.
std::string timer_of(const Json& row) {
  const std::string timer = text_of(row, "timer");
  return timer.empty() ? "host" : timer;
}

std::optional<double> host_median_of(const Json& row) {
  if (const auto host = number_of(row, "host_median_s")) return host;
  return timer_of(row) == "host" ? number_of(row, "median_s") : std::nullopt;
}

}  // namespace

ComparedTimes compared_times(const Json& a, const Json& b) {
  if (timer_of(a) == timer_of(b)) return {number_of(a, "median_s"), number_of(b, "median_s"), timer_of(a)};
  return {host_median_of(a), host_median_of(b), "host"};
}

CLI::App* add_compare_command(CLI::App& app, CompareArgs& args) {
  auto* cmd = app.add_subcommand("compare", "Per-workload speed ratios of two result files, with their geometric mean");
  cmd->add_option("baseline", args.baseline, "A: the result file to compare against")->required();
  cmd->add_option("candidate", args.candidate, "B: the result file compared")->required();
  return cmd;
}

int run_compare(const CompareArgs& args) {
  const Json a = load_results(args.baseline), b = load_results(args.candidate);
  const std::set<std::string> devices_a = devices_of(a), devices_b = devices_of(b);
  const bool with_device = !(devices_a.size() == 1 && devices_b.size() == 1 && devices_a != devices_b);
  std::map<std::string, const Json*> in_a;
  for (const Json& row : a["results"]) in_a.emplace(key_of(row, with_device), &row);

  std::vector<std::vector<std::string>> cells;
  double log_sum = 0.0;
  int matched = 0, only_b = 0, not_ok = 0, mixed_clocks = 0;
  std::map<std::string, bool> seen;
  for (const Json& row : b["results"]) {
    const std::string key = key_of(row, with_device);
    const auto it = in_a.find(key);
    if (it == in_a.end()) {
      ++only_b;
      continue;
    }
    seen[key] = true;
    const auto [ta, tb, clock] = compared_times(*it->second, row);
    mixed_clocks += clock != timer_of(row) || clock != timer_of(*it->second);
    const bool ok = text_of(*it->second, "status") == "ok" && text_of(row, "status") == "ok" && ta && tb && *ta > 0 && *tb > 0;
    std::string ratio = "-";
    if (ok) {
      ratio = fmt::format("{:.3f}", *ta / *tb);
      log_sum += std::log(*ta / *tb);
      ++matched;
    } else {
      ++not_ok;
    }
    const auto ms = [](const std::optional<double>& s) { return s ? fmt::format("{:.3f}", *s * 1e3) : std::string("-"); };
    const std::string device_a = text_of(*it->second, "device"), device_b = text_of(row, "device");
    cells.push_back({text_of(row, "op"), text_of(row, "workload"), text_of(row, "dtype"),
                     device_a == device_b ? device_b : device_a + " / " + device_b,
                     text_of(row, "impl"), clock == "device-event" ? "device" : clock, ms(ta), ms(tb), ratio,
                     ok ? "" : text_of(*it->second, "status") + " / " + text_of(row, "status")});
  }
  fmt::print("A: {}\nB: {}\n\n", args.baseline, args.candidate);
  print_text_table(stdout,
                   {"op", "workload", "dtype", "device", "impl", "clock", "A ms", "B ms", "A/B time", "status A / B"},
                   cells, {false, false, false, false, false, false, true, true, true, false});
  const std::size_t only_a = in_a.size() - seen.size();
  fmt::print("\n");
  if (matched) fmt::print("Geometric mean of A/B time over {} rows: {:.3f} (above 1: B is faster)\n", matched, std::exp(log_sum / matched));
  else fmt::print("No row ran successfully in both files: no ratio to report.\n");
  if (mixed_clocks)
    fmt::print("{} rows were timed by device events in one file and by the host in the other: their host wall "
               "times are compared\n",
               mixed_clocks);
  if (not_ok || only_a || only_b)
    fmt::print("Left out: {} rows not ok in A or B, {} only in A, {} only in B\n", not_ok, only_a, only_b);
  return 0;
}

}  // namespace porta::bench
