#include "node_times.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include <fmt/core.h>

namespace porta::ort {

std::vector<NodeTime> node_times(const Executable& exe) {
  std::vector<NodeTime> times;
  for (const NodeTiming& t : exe.node_timings()) times.push_back({t.name, std::string(to_string(t.op)), t.seconds});
  return times;
}

namespace {

// The kind of each conv of `model`, under its name and under the names of the batchnorm,
// activation and residual add that follow it: a runtime that fuses them into the conv may name the
// fused node after any of them (ORT names it after the last, plus "_nchwc" in its blocked layout).
std::map<std::string, std::string> conv_kinds(const Graph& model) {
  std::map<std::string, std::string> kinds;
  for (const Node& n : model.nodes()) {
    if (n.op == OpKind::Conv2d) {
      const Shape& w = model.shape(n.inputs[1]);
      const auto groups = std::get<Conv2dParams>(n.params).groups;
      kinds[n.name] = groups > 1 && w[1] == 1 ? "conv2d depthwise"
                      : w[2] == 1 && w[3] == 1 ? "conv2d 1x1"
                                               : fmt::format("conv2d {}x{}", w[2], w[3]);
      continue;
    }
    const bool follows = n.op == OpKind::BatchNorm || n.op == OpKind::Relu || n.op == OpKind::Clip ||
                         n.op == OpKind::Sigmoid || n.op == OpKind::Silu || n.op == OpKind::Tanh || n.op == OpKind::Add;
    const std::int32_t producer = follows ? model.info(n.inputs[0]).producer : -1;
    if (producer < 0) continue;
    if (const auto it = kinds.find(model.nodes()[static_cast<std::size_t>(producer)].name); it != kinds.end())
      kinds[n.name] = it->second;
  }
  return kinds;
}

}  // namespace

std::vector<KindTime> by_kind(const Graph& model, const std::vector<NodeTime>& times) {
  const std::map<std::string, std::string> conv_kind = conv_kinds(model);
  // ORT's op types in porta's spelling where porta has the op ("Gemm" is "gemm").
  static const std::map<std::string, std::string, std::less<>> spelling{
      {"globalaveragepool", "global_avg_pool"}, {"maxpool", "max_pool2d"}, {"averagepool", "avg_pool2d"}};
  const auto kind_of = [&](const NodeTime& t) {
    std::string op = t.op;
    std::transform(op.begin(), op.end(), op.begin(), [](unsigned char c) { return std::tolower(c); });
    if (const auto it = spelling.find(op); it != spelling.end()) op = it->second;
    if (op.find("conv") == std::string::npos) return op;
    constexpr std::string_view blocked = "_nchwc";
    const std::string name = t.name.ends_with(blocked) ? t.name.substr(0, t.name.size() - blocked.size()) : t.name;
    const auto it = conv_kind.find(name);
    return it != conv_kind.end() ? it->second : op;
  };
  std::map<std::string, KindTime> kinds;
  for (const NodeTime& t : times) {
    const std::string kind = kind_of(t);
    KindTime& k = kinds[kind];
    k.kind = kind;
    ++k.count, k.seconds += t.seconds;
  }
  std::vector<KindTime> sorted;
  for (auto& [_, k] : kinds) sorted.push_back(k);
  std::sort(sorted.begin(), sorted.end(), [](const KindTime& a, const KindTime& b) { return a.seconds > b.seconds; });
  return sorted;
}

void print_nodes(std::FILE* out, const Executable& exe) {
  const std::vector<NodeTiming> timings = exe.node_timings();
  const std::vector<NodePlan> plans = exe.node_plans();
  double total = 0.0;
  std::size_t width = 4;
  for (const NodeTiming& t : timings) total += t.seconds, width = std::max(width, t.name.size());
  width = std::min<std::size_t>(width, 40);
  fmt::print(out, "{:<{}} {:<13} {:>8} {:>5}  plan\n{} {} {} {}  {}\n", "node", width, "op", "ms", "%",
             std::string(width, '-'), std::string(13, '-'), std::string(8, '-'), std::string(5, '-'), std::string(4, '-'));
  for (std::size_t i = 0; i < timings.size(); ++i) {
    const NodeTiming& t = timings[i];
    const std::string& plan = i < plans.size() ? plans[i].plan : std::string();
    fmt::print(out, "{:<{}} {:<13} {:>8.3f} {:>5.1f}  {}\n", t.name.substr(0, width), width, to_string(t.op),
               t.seconds * 1e3, 100.0 * t.seconds / std::max(total, 1e-30), plan.empty() ? "-" : plan);
  }
}

void print_by_kind(std::FILE* out, const Graph& model,
                   const std::vector<std::pair<std::string, std::vector<NodeTime>>>& sources) {
  std::vector<std::string> order;  // kinds by the first source's time, then those only the others have
  std::vector<std::map<std::string, KindTime>> tables;
  std::vector<double> totals;
  for (const auto& [_, times] : sources) {
    auto& table = tables.emplace_back();
    double& total = totals.emplace_back();
    for (const KindTime& k : by_kind(model, times)) {
      table[k.kind] = k, total += k.seconds;
      if (std::find(order.begin(), order.end(), k.kind) == order.end()) order.push_back(k.kind);
    }
  }
  std::string header = fmt::format("{:<20}", "nodes"), rule = std::string(20, '-');
  for (const auto& [name, _] : sources) {
    header += fmt::format(" {:>22}", name + " count   ms     %");
    rule += " " + std::string(22, '-');
  }
  fmt::print(out, "{}\n{}\n", header, rule);
  for (const std::string& kind : order) {
    std::string line = fmt::format("{:<20}", kind);
    for (std::size_t s = 0; s < sources.size(); ++s) {
      const auto it = tables[s].find(kind);
      line += it == tables[s].end() ? fmt::format(" {:>22}", "-")
                                    : fmt::format(" {:>7} {:>8.2f} {:>5.1f}", it->second.count, it->second.seconds * 1e3,
                                                  100.0 * it->second.seconds / std::max(totals[s], 1e-30));
    }
    fmt::print(out, "{}\n", line);
  }
  std::string line = fmt::format("{:<20}", "total");
  for (const double total : totals) line += fmt::format(" {:>16.2f} {:>5}", total * 1e3, "");
  fmt::print(out, "{}\n", line);
}

}  // namespace porta::ort
