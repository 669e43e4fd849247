#pragma once
// Benchmark rows and the three ways they leave the program: a terminal table, JSON and CSV.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace porta::bench {

using Json = nlohmann::ordered_json;  // keeps keys in the order written, so files read naturally

inline constexpr const char* schema_name = "porta-bench/1";

// One problem on one device. An optional field stays empty (null in JSON, blank in CSV) when there
// is no honest number for it: never zero-filled, never guessed.
struct Row {
  std::string op;        // "gemm", "conv2d"
  std::string workload;  // short label, e.g. "512x512x512" or "resnet50/conv1"
  Json params;           // the whole problem, enough to run it again
  std::string device;    // the spec that opens the device again
  std::string backend;
  std::string impl = "native";
  std::string algo;      // what ran: the plans its kernels reported (Executable::node_plans), or empty
  std::string dtype;
  bool tf32 = false;
  std::string status = "ok";  // "ok", "unsupported", "skipped" (a suite's size or time limits) or "failed"
  std::string reason;         // why, when status is not "ok"; for an "ok" row, why it is not verified
  double flops = 0.0;         // per run
  double bytes = 0.0;         // per run: each input, weight and output moved once (the roofline minimum)
  std::uint64_t seed = 0;
  int samples = 0;
  std::string timer;  // the clock of median_s..max_s: "device-event" or "host"; empty when nothing was timed
  std::optional<double> median_s, min_s, p90_s, mean_s, max_s;
  std::optional<double> host_median_s, host_min_s;  // steady_clock around Executable::run(), whatever `timer` is
  std::optional<double> first_run_s;  // compile + first run
  std::optional<double> compile_s;
  std::optional<double> gflops, gbs;
  std::optional<double> ai;           // arithmetic intensity, flops / bytes
  std::optional<double> pct_peak;     // gflops as % of the device's measured compute ceiling for the dtype
  std::optional<double> pct_roofline; // gflops as % of the roofline at this ai: min(compute, ai x bandwidth)
  std::string bound;                  // "compute" or "memory": which ceiling the roofline is at, at this ai
  std::optional<double> overhead_pct; // the sampling loop's time beyond the timed samples, % of them (see timing.hpp)
  std::optional<bool> verified;       // null when not verified
  std::string oracle;                 // what it was verified against: "ref", or "cpu" where ref would be too slow
  std::optional<double> nmse, max_abs;
  // Only in a job of several processes (bench/job.hpp), and only in JSON and CSV where set.
  std::optional<int> rank;
  std::string host;
  // Only for collectives (porta-bench comm): nccl-tests' algorithm and bus bandwidths, in GB/s.
  std::optional<double> algbw_gbs, busbw_gbs;
};

Json to_json(const Row& row);
Json results_document(const Json& env, const std::vector<Row>& rows);

// Fails early (porta::Error IoError) rather than after a long run that could not be saved.
void check_writable(const std::filesystem::path& path);
void write_json(const std::filesystem::path& path, const Json& env, const std::vector<Row>& rows);
void write_csv(const std::filesystem::path& path, const std::vector<Row>& rows);
// The same from a whole document and from rows already in JSON (a job's, gathered at rank 0); the
// CSV's columns are a Row's, then any others the rows have (rank, host), in the order first seen.
void write_json(const std::filesystem::path& path, const Json& doc);
void write_csv(const std::filesystem::path& path, const Json& rows);

// `text` on one line: each line break and the indentation after it become one space. Reasons can
// span lines (one per unsupported node); a table row or an error line cannot.
std::string single_line(std::string_view text);

// Left-aligned text columns (right-aligned where `right_align` says), a header and a rule under it.
void print_text_table(std::FILE* out, const std::vector<std::string>& header,
                      const std::vector<std::vector<std::string>>& cells, const std::vector<bool>& right_align);

// Conv FLOPs are a direct convolution's whatever algorithm ran. A rate is "effective" (more arithmetic
// than the device may have done) where the provider may have run an algorithm doing fewer multiplies
// (Winograd, FFT), or where it is above the device's measured compute ceiling: why, in a few words;
// empty for a rate of the arithmetic done. Every table and plot of rates marks such a rate.
std::string effective_rate_reason(const std::string& op, const Json& params, const std::string& backend,
                                  const std::string& impl, std::optional<double> pct_peak);
std::string effective_rate_reason(const Row& row);
// What the mark means, for a note under a table or plot that shows one.
extern const char* const effective_rate_note;

// GFLOP/s with one decimal, " eff" after an effective rate, "-" for none.
std::string rate_cell(const Row& row);
// The note, under a table of `rows` where one is marked.
void print_effective_note(std::FILE* out, const std::vector<Row>& rows);

// One line per row; reasons in full in the last column.
void print_table(std::FILE* out, const std::vector<Row>& rows);
// GFLOP/s with one column per device; printed only when there are several devices to compare.
void print_comparison(std::FILE* out, const std::vector<Row>& rows);

}  // namespace porta::bench
