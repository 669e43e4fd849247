#include "devices.hpp"

#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "op_cases/op_cases.hpp"
#include "porta/porta.hpp"
#include "results.hpp"

namespace porta::bench {
namespace {

std::string memory_text(std::uint64_t bytes) {
  if (bytes == 0) return "-";
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

std::string markdown_cell(std::string text) {
  std::string escaped;
  for (char c : text) {
    if (c == '|') escaped += "\\|";
    else if (c == '\n') escaped += ' ';
    else escaped += c;
  }
  return escaped;
}

// The first f32 case of `op` (channels-last or not; the first bool one for the logical ops, which take
// nothing else) and the first node in it that is that op (the rest only feed it).
struct Representative {
  std::string case_name;
  Graph graph;
  std::optional<std::size_t> node;
};

std::optional<Representative> representative(const std::vector<cases::OpCase>& all, OpKind op, bool nhwc) {
  for (const cases::OpCase& c : all) {
    const DType dtype = op == OpKind::Logical ? DType::boolean : DType::f32;
    if (c.op != op || c.dtype != dtype || (c.name.find("_nhwc/") != std::string::npos) != nhwc) continue;
    Representative r{.case_name = c.name, .graph = c.build(42)};
    for (std::size_t i = 0; i < r.graph.nodes().size(); ++i)
      if (r.graph.nodes()[i].op == op) {
        r.node = i;
        return r;
      }
  }
  return std::nullopt;
}

}  // namespace

void print_devices(std::FILE* out) {
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> without_device;
  for (const BackendStatus& backend : backends()) {
    if (backend.devices.empty())
      without_device.push_back(
          fmt::format("{}: {}", backend.name, backend.reason.empty() ? "no device" : single_line(backend.reason)));
    for (const DeviceInfo& d : backend.devices)
      cells.push_back({d.spec, backend.name, d.name, d.arch, d.threads ? std::to_string(d.threads) : "-",
                       d.compute_units ? std::to_string(d.compute_units) : "-", memory_text(d.memory_total)});
  }
  print_text_table(out, {"spec", "backend", "name", "arch", "threads", "units", "memory"}, cells,
                   {false, false, false, false, true, true, true});
  if (!without_device.empty()) {
    fmt::print(out, "\nBackends without a usable device, and why:\n");
    for (const std::string& line : without_device) fmt::print(out, "  {}\n", line);
  }
}

void print_support_matrix(std::FILE* out, bool markdown) {
  // One column per device and provider; a vendor column only where the device has a provider.
  struct Column {
    Device device;
    CompileOptions options;
    std::string label;
  };
  std::vector<Column> columns;
  for (const DeviceInfo& info : devices()) {
    const Device device = Device::open(info.spec);
    columns.push_back({device, {}, info.spec});
    columns.push_back({device, {.impl = Impl::Vendor}, info.spec + " vendor"});
  }
  const std::vector<cases::OpCase> all = cases::all_cases();
  // A row per op, and one more for each op that also takes NHWC activations.
  std::vector<std::string> labels;
  std::vector<std::optional<Representative>> reps;
  for (int k = 0; k < op_kind_count; ++k) {
    const auto op = static_cast<OpKind>(k);
    labels.emplace_back(to_string(op));
    reps.push_back(representative(all, op, false));
    const bool has_layout = op == OpKind::Conv2d || op == OpKind::MaxPool2d || op == OpKind::AvgPool2d ||
                            op == OpKind::GlobalAvgPool;
    if (auto nhwc = has_layout ? representative(all, op, true) : std::nullopt) {
      labels.push_back(std::string(to_string(op)) + " (NHWC)");
      reps.push_back(std::move(nhwc));
    }
  }
  std::vector<std::vector<std::string>> by_column(columns.size());
  std::vector<bool> any_yes(columns.size(), false);
  for (const std::optional<Representative>& rep : reps) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (!rep) {
        by_column[c].push_back("no case");
        continue;
      }
      std::string reason;
      try {
        reason = columns[c].device.unsupported_reason(rep->graph, rep->graph.nodes()[*rep->node], columns[c].options);
      } catch (const std::exception& e) {
        reason = e.what();
      }
      any_yes[c] = any_yes[c] || reason.empty();
      by_column[c].push_back(reason.empty() ? "yes" : "no: " + reason);
    }
  }
  std::vector<std::string> header{"op", "case"};
  std::vector<std::vector<std::string>> cells;
  for (std::size_t row = 0; row < reps.size(); ++row)
    cells.push_back({labels[row], reps[row] ? reps[row]->case_name : "-"});
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (columns[c].options.impl == Impl::Vendor && !any_yes[c]) continue;
    header.push_back(columns[c].label);
    for (std::size_t k = 0; k < cells.size(); ++k) cells[k].push_back(by_column[c][k]);
  }
  const bool no_devices = columns.empty();

  if (!markdown) {
    print_text_table(out, header, cells, std::vector<bool>(header.size(), false));
    if (no_devices) fmt::print(out, "\nNo devices found: see `porta-bench devices`.\n");
    return;
  }
  std::string row = "|", rule = "|";
  for (const std::string& h : header) {
    row += " " + markdown_cell(h) + " |";
    rule += " --- |";
  }
  fmt::print(out, "{}\n{}\n", row, rule);
  for (const auto& line : cells) {
    row = "|";
    for (const std::string& cell : line) row += " " + markdown_cell(cell) + " |";
    fmt::print(out, "{}\n", row);
  }
}

}  // namespace porta::bench
