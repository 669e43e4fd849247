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

// The first f32 case of `op` and the first node in it that is that op (the rest only feed it).
struct Representative {
  std::string case_name;
  Graph graph;
  std::optional<std::size_t> node;
};

std::optional<Representative> representative(const std::vector<cases::OpCase>& all, OpKind op) {
  for (const cases::OpCase& c : all) {
    if (c.op != op || c.dtype != DType::f32) continue;
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
    fmt::print(out, "\nCompiled in, but without a usable device:\n");
    for (const std::string& line : without_device) fmt::print(out, "  {}\n", line);
  }
}

void print_support_matrix(std::FILE* out, bool markdown) {
  std::vector<Device> devs;
  std::vector<std::string> header{"op", "case"};
  for (const DeviceInfo& info : devices()) {
    devs.push_back(Device::open(info.spec));
    header.push_back(info.spec);
  }
  const std::vector<cases::OpCase> all = cases::all_cases();
  std::vector<std::vector<std::string>> cells;
  for (int k = 0; k < op_kind_count; ++k) {
    const auto op = static_cast<OpKind>(k);
    std::vector<std::string> line{std::string(to_string(op))};
    const std::optional<Representative> rep = representative(all, op);
    line.push_back(rep ? rep->case_name : "-");
    for (const Device& dev : devs) {
      if (!rep) {
        line.push_back("no case");
        continue;
      }
      std::string reason;
      try {
        reason = dev.unsupported_reason(rep->graph, rep->graph.nodes()[*rep->node]);
      } catch (const std::exception& e) {
        reason = e.what();
      }
      line.push_back(reason.empty() ? "yes" : "no: " + reason);
    }
    cells.push_back(std::move(line));
  }

  if (!markdown) {
    print_text_table(out, header, cells, std::vector<bool>(header.size(), false));
    if (devs.empty()) fmt::print(out, "\nNo devices found: see `porta-bench devices`.\n");
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
