#include "merged_results.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/core.h>

#include "comm.hpp"
#include "results_file.hpp"

namespace porta::bench {

Merged merge(const std::vector<ResultsInput>& inputs) {
  Merged m;
  std::map<std::pair<std::size_t, std::string>, std::size_t> index;  // (input, spec) -> platform
  std::multimap<std::string, std::size_t> by_spec;
  for (std::size_t f = 0; f < inputs.size(); ++f) {
    const Json& doc = inputs[f].doc;
    const Json& env = doc["env"];
    const std::map<std::string, Ceilings> ceilings = recorded_ceilings(doc);
    const auto platform_of = [&](const std::string& spec, const std::string& backend) {
      const auto key = std::pair{f, spec};
      if (const auto it = index.find(key); it != index.end()) return it->second;
      Platform p{.input = f, .label = spec, .spec = spec, .backend = backend, .host = text_of(env, "hostname")};
      if (env.contains("devices") && env["devices"].is_array())
        for (const Json& d : env["devices"])
          if (text_of(d, "spec") == spec) {
            p.name = text_of(d, "name"), p.arch = text_of(d, "arch");
            p.threads = static_cast<int>(number_of(d, "threads").value_or(0));
          }
      if (const auto it = ceilings.find(spec); it != ceilings.end()) p.ceilings = it->second;
      m.platforms.push_back(p);
      by_spec.emplace(spec, m.platforms.size() - 1);
      return index[key] = m.platforms.size() - 1;
    };
    for (const Json& row : doc["results"]) {
      const std::string op = text_of(row, "op");
      if (is_comm_op(op)) continue;  // bandwidths of links, not devices: charted on their own (report.cpp)
      const std::size_t platform = platform_of(text_of(row, "device"), text_of(row, "backend"));
      if (op == "stream" || op == "launch" || op == "fma" || op == "device-copy") continue;  // their numbers are the ceilings
      Point pt{.platform = platform,
               .op = op,
               .workload = text_of(row, "workload"),
               .impl = text_of(row, "impl"),
               .algo = text_of(row, "algo"),
               .problem = fmt::format("{} {} {}", op, text_of(row, "workload"), text_of(row, "dtype")),
               .status = text_of(row, "status"),
               .reason = text_of(row, "reason"),
               .params = row.contains("params") ? row["params"] : Json(),
               .gflops = number_of(row, "gflops"),
               .ai = number_of(row, "ai"),
               .pct_peak = number_of(row, "pct_peak"),
               .median_s = number_of(row, "median_s"),
               .verified = flag_of(row, "verified"),
               .dtype = text_of(row, "dtype")};
      pt.effective = effective_rate_reason(op, pt.params, text_of(row, "backend"), pt.impl, pt.pct_peak);
      if (std::find(m.problems.begin(), m.problems.end(), pt.problem) == m.problems.end()) m.problems.push_back(pt.problem);
      m.points.push_back(std::move(pt));
    }
  }
  // The same spec in several files: tell them apart by host, else by file.
  for (Platform& p : m.platforms) {
    if (by_spec.count(p.spec) < 2) continue;
    std::set<std::string> hosts;
    const auto [first, last] = by_spec.equal_range(p.spec);
    for (auto it = first; it != last; ++it) hosts.insert(m.platforms[it->second].host);
    p.label = hosts.size() == by_spec.count(p.spec) ? p.spec + " @ " + p.host : p.label;
  }
  for (const auto& [key, i] : index)
    if (by_spec.count(m.platforms[i].spec) > 1 && m.platforms[i].label == m.platforms[i].spec)
      m.platforms[i].label = fmt::format("{} [{}]", m.platforms[i].spec, inputs[key.first].name);
  return m;
}

}  // namespace porta::bench
