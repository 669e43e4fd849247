#pragma once
// Workload lists as CSV: the shared lists in bench/workloads/ and any file given with --workload.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "op_cases/op_cases.hpp"
#include "problems.hpp"

namespace porta::bench {

// One line of a workload file. The header decides the kind: a file with an `m` column lists
// GEMMs (m, n, k; optional trans_a, trans_b, batch), one with a `c` column convolutions (c, h, w,
// k, r, s; optional n, stride or stride_h/stride_w, pad or pad_h/pad_w, dilation, groups).
// Either may have a label column (`set`, `layer` or `name`), `count` (how often the problem
// occurs in its network, kept for the record) and `dtype` (f32 when absent).
struct WorkloadEntry {
  int line = 0;  // 1-based line in the file, for messages
  std::string label;
  std::int64_t count = 1;
  std::optional<std::int64_t> n;  // conv batch, when the file gives one
  std::variant<cases::GemmProblem, cases::ConvProblem> problem;
};

// Parses CSV text (`source` names it in messages). Blank lines and lines starting with '#' are
// skipped. Anything else malformed throws porta::Error(InvalidArgument) naming the source, the
// line and the offending value; it never crashes, whatever the text (it is fuzzed).
std::vector<WorkloadEntry> parse_workload_csv(std::string_view text, std::string_view source = "workload");

// Reads and parses a file; an unreadable file is porta::Error(IoError).
std::vector<WorkloadEntry> read_workload_file(const std::filesystem::path& path);

// One of the lists built into porta-bench (bench/workloads/NAME.csv), parsed.
std::vector<WorkloadEntry> builtin_workload(std::string_view name);

// Problems for the entries, labelled "<prefix><label>/<sizes>" (or "<prefix><sizes>" without a
// label); a conv entry takes `conv_n` when given, else its own n, else 1, and is stored in
// `conv_layout`. A shape porta rejects throws porta::Error naming `source` and the entry's line.
std::vector<Problem> workload_problems(const std::vector<WorkloadEntry>& entries, std::uint64_t seed,
                                       std::string_view source = "workload",
                                       std::optional<std::int64_t> conv_n = std::nullopt,
                                       std::string_view prefix = {}, Layout conv_layout = Layout::NCHW);

}  // namespace porta::bench
