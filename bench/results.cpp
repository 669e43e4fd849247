#include "results.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>

#include <fmt/core.h>

#include "porta/error.hpp"

namespace porta::bench {
namespace {

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

std::ofstream open_for_writing(const std::filesystem::path& path, std::ios::openmode mode = std::ios::trunc) {
  std::ofstream file(path, std::ios::out | mode);
  if (!file)
    throw Error(ErrorCode::IoError, fmt::format("cannot write '{}': {}", path.string(), std::strerror(errno)));
  return file;
}

void finish(std::ofstream& file, const std::filesystem::path& path) {
  file.flush();
  if (!file) throw Error(ErrorCode::IoError, fmt::format("writing '{}' failed", path.string()));
}

// CSV cell for a JSON value: strings bare, null empty, objects as compact JSON; quoted when needed.
std::string csv_cell(const Json& v) {
  std::string text = v.is_null() ? "" : v.is_string() ? v.get<std::string>() : v.dump();
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string fixed_or_dash(const std::optional<double>& v, int digits) {
  return v ? fmt::format("{:.{}f}", *v, digits) : "-";
}

std::string verified_text(const Row& row) {
  if (!row.verified) return "-";
  if (!*row.verified) return "NO";
  return row.oracle == "ref" || row.oracle.empty() ? "yes" : "yes, " + row.oracle;
}

std::int64_t integer_param(const Json& params, const char* key, std::int64_t fallback) {
  return params.is_object() && params.contains(key) && params[key].is_number_integer() ? params[key].get<std::int64_t>()
                                                                                     : fallback;
}

// A conv that Winograd or FFT can run: ungrouped, undilated, stride 1, larger than 1x1.
bool winograd_shaped(const Json& params) {
  for (const char* one : {"groups", "stride_h", "stride_w", "dilation_h", "dilation_w"})
    if (integer_param(params, one, 1) != 1) return false;
  return integer_param(params, "r", 1) * integer_param(params, "s", 1) > 1;
}

std::string status_text(const Row& row) {
  if (row.status == "ok") return row.reason.empty() ? "ok" : "ok (" + single_line(row.reason) + ")";
  return row.reason.empty() ? row.status : row.status + ": " + single_line(row.reason);
}

}  // namespace

std::string single_line(std::string_view text) {
  std::string line;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      line += text[i];
      continue;
    }
    while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
    line += ' ';
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

const char* const effective_rate_note =
    "eff: an effective rate, which may count more arithmetic than the device did. Conv FLOPs are a direct "
    "convolution's whatever algorithm ran, and this provider may run Winograd or FFT, which do fewer multiplies; or "
    "the rate is above the device's compute ceiling as porta's own kernels measured it (a library with instructions "
    "they do not use, bf16 dot products say, can pass it). A ratio of two rates of one problem is still a ratio of "
    "times.";

std::string effective_rate_reason(const std::string& op, const Json& params, const std::string& backend,
                                  const std::string& impl, std::optional<double> pct_peak) {
  // porta's cpu backend runs Winograd F(4x4, 3x3) on 3x3 stride-1 convs with enough channels and tiles
  // (backends/cpu/ops/conv2d_winograd.cpp); cuDNN runs the fastest of its algorithms by its own timing.
  const std::string provider = impl.substr(0, impl.find('/'));  // a model row's may name a layout: "native/nhwc"
  const bool porta_cpu = backend == "cpu" && provider == "native", cudnn = backend == "cuda" && provider == "vendor";
  const char* const who =
      porta_cpu ? "porta's cpu backend may run Winograd F(4x4, 3x3)" : "cuDNN may pick Winograd or FFT";
  const bool three_by_three = integer_param(params, "r", 0) == 3 && integer_param(params, "s", 0) == 3;
  if (op == "conv2d" && (porta_cpu || cudnn) && winograd_shaped(params) && (cudnn || three_by_three))
    return std::string(who) + " here";
  // A network's row from before they were counted may have them.
  if (op == "model" && (porta_cpu || cudnn) && integer_param(params, "convs_3x3_stride1", 1) > 0)
    return std::string(who) + " on its 3x3 convs";
  if (pct_peak && *pct_peak > 100.0) return "above the device's measured compute ceiling";
  return {};
}

std::string effective_rate_reason(const Row& row) {
  return effective_rate_reason(row.op, row.params, row.backend, row.impl, row.pct_peak);
}

std::string rate_cell(const Row& row) {
  return fixed_or_dash(row.gflops, 1) + (row.gflops && !effective_rate_reason(row).empty() ? " eff" : "");
}

void print_effective_note(std::FILE* out, const std::vector<Row>& rows) {
  if (std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.gflops && !effective_rate_reason(r).empty(); }))
    fmt::print(out, "{}\n", effective_rate_note);
}

void print_text_table(std::FILE* out, const std::vector<std::string>& header,
                      const std::vector<std::vector<std::string>>& cells, const std::vector<bool>& right_align) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
  }
  const auto print_line = [&](const std::vector<std::string>& line) {
    std::string text;
    for (std::size_t c = 0; c < line.size(); ++c) {
      const bool last = c + 1 == line.size();
      if (c) text += "  ";
      if (right_align[c]) text += fmt::format("{:>{}}", line[c], width[c]);
      else text += last ? line[c] : fmt::format("{:<{}}", line[c], width[c]);
    }
    fmt::print(out, "{}\n", text);
  };
  print_line(header);
  std::vector<std::string> rule;
  for (std::size_t w : width) rule.emplace_back(std::min<std::size_t>(w, 40), '-');  // long reasons: no long rule
  print_line(rule);
  for (const auto& line : cells) print_line(line);
}

Json to_json(const Row& row) {
  Json j;
  j["op"] = row.op;
  j["workload"] = row.workload;
  j["params"] = row.params;
  j["device"] = row.device;
  j["backend"] = row.backend;
  j["impl"] = row.impl;
  j["algo"] = row.algo.empty() ? Json(nullptr) : Json(row.algo);
  j["dtype"] = row.dtype;
  j["tf32"] = row.tf32;
  j["status"] = row.status;
  j["reason"] = row.reason;
  j["flops"] = row.flops;
  j["bytes"] = row.bytes;
  j["seed"] = row.seed;
  j["samples"] = row.samples;
  j["timer"] = row.timer.empty() ? Json(nullptr) : Json(row.timer);
  j["median_s"] = optional_json(row.median_s);
  j["min_s"] = optional_json(row.min_s);
  j["p90_s"] = optional_json(row.p90_s);
  j["mean_s"] = optional_json(row.mean_s);
  j["max_s"] = optional_json(row.max_s);
  j["host_median_s"] = optional_json(row.host_median_s);
  j["host_min_s"] = optional_json(row.host_min_s);
  j["first_run_s"] = optional_json(row.first_run_s);
  j["compile_s"] = optional_json(row.compile_s);
  j["gflops"] = optional_json(row.gflops);
  j["gbs"] = optional_json(row.gbs);
  j["ai"] = optional_json(row.ai);
  j["pct_peak"] = optional_json(row.pct_peak);
  j["pct_roofline"] = optional_json(row.pct_roofline);
  j["bound"] = row.bound;
  j["overhead_pct"] = optional_json(row.overhead_pct);
  j["verified"] = row.verified ? Json(*row.verified) : Json(nullptr);
  j["oracle"] = row.oracle.empty() ? Json(nullptr) : Json(row.oracle);
  j["nmse"] = optional_json(row.nmse);
  j["max_abs"] = optional_json(row.max_abs);
  if (row.rank) {
    j["rank"] = *row.rank;
    j["host"] = row.host;
  }
  if (row.algbw_gbs) j["algbw_gbs"] = *row.algbw_gbs;
  if (row.busbw_gbs) j["busbw_gbs"] = *row.busbw_gbs;
  return j;
}

Json results_document(const Json& env, const std::vector<Row>& rows) {
  Json doc;
  doc["schema"] = schema_name;
  doc["env"] = env;
  doc["results"] = Json::array();
  for (const Row& row : rows) doc["results"].push_back(to_json(row));
  return doc;
}

void check_writable(const std::filesystem::path& path) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  { auto probe = open_for_writing(path, std::ios::app); }
  if (!existed) std::filesystem::remove(path, ec);
}

void write_json(const std::filesystem::path& path, const Json& doc) {
  auto file = open_for_writing(path);
  // Replace invalid UTF-8 (from a driver's device name, say) rather than throw after a long run.
  file << doc.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
  finish(file, path);
}

void write_json(const std::filesystem::path& path, const Json& env, const std::vector<Row>& rows) {
  write_json(path, results_document(env, rows));
}

void write_csv(const std::filesystem::path& path, const Json& rows) {
  auto file = open_for_writing(path);
  const auto write_line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) file << (i ? "," : "") << cells[i];
    file << '\n';
  };
  std::vector<std::string> columns;  // the header, even when there are no rows
  const Json empty = to_json(Row{});  // named: items() of a temporary would dangle
  for (const auto& item : empty.items()) columns.push_back(item.key());
  for (const Json& row : rows)
    for (const auto& item : row.items())
      if (std::find(columns.begin(), columns.end(), item.key()) == columns.end()) columns.push_back(item.key());
  write_line(columns);
  std::vector<std::string> cells;
  for (const Json& row : rows) {
    cells.clear();
    for (const std::string& column : columns) cells.push_back(csv_cell(row.contains(column) ? row[column] : Json()));
    write_line(cells);
  }
  finish(file, path);
}

void write_csv(const std::filesystem::path& path, const std::vector<Row>& rows) {
  Json list = Json::array();
  for (const Row& row : rows) list.push_back(to_json(row));
  write_csv(path, list);
}

void print_table(std::FILE* out, const std::vector<Row>& rows) {
  const auto ms = [](const std::optional<double>& s) { return s ? std::optional(*s * 1e3) : std::nullopt; };
  std::vector<std::vector<std::string>> cells;
  for (const Row& row : rows) {
    cells.push_back({row.op, row.workload, row.device, row.impl, row.dtype, fixed_or_dash(ms(row.median_s), 3),
                     row.timer == "device-event" ? "device" : row.timer.empty() ? "-" : row.timer,
                     fixed_or_dash(ms(row.host_median_s), 3), fixed_or_dash(ms(row.first_run_s), 3), rate_cell(row),
                     fixed_or_dash(row.gbs, 1), fixed_or_dash(row.pct_peak, 0), verified_text(row),
                     row.nmse ? fmt::format("{:.1e}", *row.nmse) : "-", status_text(row)});
  }
  print_text_table(out,
                   {"op", "workload", "device", "impl", "dtype", "median ms", "clock", "host ms", "first ms", "GFLOP/s",
                    "GB/s", "% peak", "verified", "nmse", "status"},
                   cells, {false, false, false, false, false, true, false, true, true, true, true, true, true, true, false});
  print_effective_note(out, rows);
}

void print_comparison(std::FILE* out, const std::vector<Row>& rows) {
  std::vector<std::string> devices;
  std::vector<std::string> problems;  // "op workload dtype", in first-seen order
  std::map<std::pair<std::string, std::string>, std::string> cell;
  for (const Row& row : rows) {
    const std::string problem = fmt::format("{} {} {}", row.op, row.workload, row.dtype);
    // One column per device and provider; the native provider goes by the device's name alone.
    const std::string column = row.impl == "native" ? row.device : row.device + " " + row.impl;
    if (std::find(devices.begin(), devices.end(), column) == devices.end()) devices.push_back(column);
    if (std::find(problems.begin(), problems.end(), problem) == problems.end()) problems.push_back(problem);
    cell[{problem, column}] = row.status == "ok" ? rate_cell(row) : row.status;
  }
  if (devices.size() < 2) return;
  std::vector<std::string> header{"GFLOP/s"};
  header.insert(header.end(), devices.begin(), devices.end());
  std::vector<std::vector<std::string>> cells;
  for (const auto& problem : problems) {
    std::vector<std::string> line{problem};
    for (const auto& device : devices) {
      const auto it = cell.find({problem, device});
      line.push_back(it == cell.end() ? "-" : it->second);
    }
    cells.push_back(std::move(line));
  }
  std::vector<bool> right(header.size(), true);
  right[0] = false;
  print_text_table(out, header, cells, right);
}

}  // namespace porta::bench
