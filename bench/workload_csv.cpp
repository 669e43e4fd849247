#include "workload_csv.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "core/runtime/embedded_source.hpp"

namespace porta::detail {
std::span<const EmbeddedSource> bench_workloads();  // bench/CMakeLists.txt embeds workloads/*.csv
}

namespace porta::bench {
namespace {

const std::vector<std::string> label_columns{"set", "layer", "name"};
const std::vector<std::string> gemm_columns{"m", "n", "k", "trans_a", "trans_b", "batch"};
const std::vector<std::string> conv_columns{"n", "c", "h", "w", "k", "r", "s", "stride", "stride_h", "stride_w",
                                            "pad", "pad_h", "pad_w", "dilation", "groups"};
const std::vector<std::string> common_columns{"count", "dtype"};

bool contains(const std::vector<std::string>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t comma = line.find(',', pos);
    std::string_view field = line.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    while (!field.empty() && (field.front() == ' ' || field.front() == '\t')) field.remove_prefix(1);
    while (!field.empty() && (field.back() == ' ' || field.back() == '\t')) field.remove_suffix(1);
    fields.push_back(field);
    if (comma == std::string_view::npos) return fields;
    pos = comma + 1;
  }
}

// Printable excerpt of untrusted text for an error message.
std::string shown(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 40)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return text.size() > 40 ? out + "..." : out;
}

class LineReader {
 public:
  LineReader(std::string_view source, int line, const std::vector<std::string>& header,
             const std::vector<std::string_view>& fields)
      : source_(source), line_(line) {
    for (std::size_t i = 0; i < header.size(); ++i) values_[header[i]] = fields[i];
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorCode::InvalidArgument, fmt::format("{}:{}: {}", source_, line_, what));
  }

  bool has(const std::string& column) const { return values_.count(column) && !values_.at(column).empty(); }
  std::string_view text(const std::string& column) const { return has(column) ? values_.at(column) : ""; }

  // An integer >= `least`, or `fallback` when the column is absent or empty.
  std::int64_t integer(const std::string& column, std::int64_t fallback, std::int64_t least) const {
    if (!has(column)) return fallback;
    const std::string_view t = values_.at(column);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    if (ec == std::errc::result_out_of_range) fail(fmt::format("{} = {} is out of range", column, shown(t)));
    if (ec != std::errc{} || end != t.data() + t.size())
      fail(fmt::format("{} = '{}' is not an integer", column, shown(t)));
    if (value < least) fail(fmt::format("{} = {} must be >= {}", column, value, least));
    return value;
  }

  bool flag(const std::string& column) const {
    if (!has(column)) return false;
    const std::string_view t = values_.at(column);
    if (t == "0" || t == "false" || t == "N") return false;
    if (t == "1" || t == "true" || t == "T") return true;
    fail(fmt::format("{} = '{}' is not 0 or 1", column, shown(t)));
  }

  // `one` (e.g. "stride") for both dimensions, or `h`/`w` separately, never both forms.
  std::array<std::int64_t, 2> pair(const std::string& one, const std::string& h, const std::string& w,
                                   std::int64_t fallback, std::int64_t least) const {
    if (has(one) && (has(h) || has(w))) fail(fmt::format("give either {} or {}/{}, not both", one, h, w));
    const std::int64_t both = integer(one, fallback, least);
    return {integer(h, both, least), integer(w, both, least)};
  }

 private:
  std::string_view source_;
  int line_;
  std::map<std::string, std::string_view, std::less<>> values_;
};

WorkloadEntry parse_entry(const LineReader& in, bool gemm, int line) {
  WorkloadEntry e{.line = line};
  for (const std::string& c : label_columns)
    if (in.has(c)) e.label = std::string(in.text(c));
  e.count = in.integer("count", 1, 1);
  DType dtype = DType::f32;
  if (in.has("dtype")) {
    try {
      dtype = parse_dtype(in.text("dtype"));
    } catch (const Error&) {
      in.fail(fmt::format("dtype = '{}' is not one of f32, f16, bf16", shown(in.text("dtype"))));
    }
  }
  if (gemm) {
    for (const char* c : {"m", "n", "k"})
      if (!in.has(c)) in.fail(fmt::format("column {} is empty", c));
    e.problem = cases::GemmProblem{.m = in.integer("m", 0, 1), .n = in.integer("n", 0, 1), .k = in.integer("k", 0, 1),
                                   .batch = in.integer("batch", 1, 1), .trans_a = in.flag("trans_a"),
                                   .trans_b = in.flag("trans_b"), .dtype = dtype};
    return e;
  }
  for (const char* c : {"c", "h", "w", "k", "r", "s"})
    if (!in.has(c)) in.fail(fmt::format("column {} is empty", c));
  cases::ConvProblem p{.n = in.integer("n", 1, 1), .c = in.integer("c", 0, 1), .h = in.integer("h", 0, 1),
                       .w = in.integer("w", 0, 1), .k = in.integer("k", 0, 1), .r = in.integer("r", 0, 1),
                       .s = in.integer("s", 0, 1), .dtype = dtype};
  if (in.has("n")) e.n = p.n;
  p.params.stride = in.pair("stride", "stride_h", "stride_w", 1, 1);
  const auto pad = in.pair("pad", "pad_h", "pad_w", 0, 0);
  p.params.pad = {pad[0], pad[1], pad[0], pad[1]};
  const std::int64_t dilation = in.integer("dilation", 1, 1);
  p.params.dilation = {dilation, dilation};
  p.params.groups = in.integer("groups", 1, 1);
  e.problem = p;
  return e;
}

}  // namespace

std::vector<WorkloadEntry> parse_workload_csv(std::string_view text, std::string_view source) {
  std::vector<std::string> header;
  bool gemm = false;
  std::vector<WorkloadEntry> entries;
  int line_number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos || line.front() == '#') continue;
    const auto fail = [&](const std::string& what) {
      throw Error(ErrorCode::InvalidArgument, fmt::format("{}:{}: {}", source, line_number, what));
    };
    if (line.find('"') != std::string_view::npos) fail("quoted fields are not supported in workload files");
    const std::vector<std::string_view> fields = split_fields(line);
    if (header.empty()) {
      for (const std::string_view f : fields) {
        const std::string name(f);
        if (name.empty()) fail("empty column name in the header");
        if (contains(header, name)) fail(fmt::format("column '{}' appears twice", shown(name)));
        header.push_back(name);
      }
      gemm = contains(header, "m");
      if (gemm == contains(header, "c"))
        fail("the header needs an 'm' column (GEMM) or a 'c' column (convolution), not both");
      const std::vector<std::string>& kind = gemm ? gemm_columns : conv_columns;
      for (const std::string& name : header)
        if (!contains(kind, name) && !contains(label_columns, name) && !contains(common_columns, name))
          fail(fmt::format("unknown column '{}' for a {} list (known: {}, {}, {})", shown(name), gemm ? "GEMM" : "conv",
                           fmt::join(kind, ", "), fmt::join(label_columns, ", "), fmt::join(common_columns, ", ")));
      for (const char* required : {"m", "n", "k"})
        if (gemm && !contains(header, required)) fail(fmt::format("the header has no '{}' column", required));
      for (const char* required : {"c", "h", "w", "k", "r", "s"})
        if (!gemm && !contains(header, required)) fail(fmt::format("the header has no '{}' column", required));
      continue;
    }
    if (fields.size() != header.size())
      fail(fmt::format("{} fields, the header has {}", fields.size(), header.size()));
    entries.push_back(parse_entry(LineReader(source, line_number, header, fields), gemm, line_number));
  }
  if (header.empty()) throw Error(ErrorCode::InvalidArgument, fmt::format("{}: no header line", source));
  return entries;
}

std::vector<WorkloadEntry> read_workload_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  if (file) text << file.rdbuf();
  if (!file || file.bad())
    throw Error(ErrorCode::IoError, fmt::format("cannot read workload file '{}'", path.string()));
  return parse_workload_csv(text.str(), path.string());
}

std::vector<WorkloadEntry> builtin_workload(std::string_view name) {
  for (const detail::EmbeddedSource& s : detail::bench_workloads())
    if (s.name == name) return parse_workload_csv(s.text, fmt::format("workloads/{}.csv", name));
  throw Error(ErrorCode::NotFound, fmt::format("porta-bench has no built-in workload '{}'", name));
}

std::vector<Problem> workload_problems(const std::vector<WorkloadEntry>& entries, std::uint64_t seed,
                                       std::string_view source, std::optional<std::int64_t> conv_n,
                                       std::string_view prefix, Layout conv_layout) {
  std::vector<Problem> problems;
  for (const WorkloadEntry& e : entries) {
    try {
      if (const auto* g = std::get_if<cases::GemmProblem>(&e.problem)) {
        const std::string sizes = gemm_label(*g);
        problems.push_back(gemm_problem(*g, fmt::format("{}{}{}", prefix, e.label.empty() ? "" : e.label + "/", sizes)));
      } else {
        cases::ConvProblem c = std::get<cases::ConvProblem>(e.problem);
        c.n = conv_n.value_or(c.n);
        c.params.layout = conv_layout;
        const std::string sizes = conv_label(c);
        problems.push_back(
            conv_problem(c, seed, fmt::format("{}{}{}", prefix, e.label.empty() ? "" : e.label + "/", sizes)));
      }
    } catch (const Error& err) {
      throw Error(err.code(), fmt::format("{}:{}: {}", source, e.line, err.what()));
    }
  }
  return problems;
}

}  // namespace porta::bench
