#pragma once
// GEMM and conv problems, the devices to run them on, and running one on another into a Row.
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "porta/porta.hpp"
#include "results.hpp"
#include "timing.hpp"
#include "op_cases/op_cases.hpp"
#include "op_cases/verify.hpp"

namespace porta::bench {

// A problem ready to run anywhere. Its graph is built once, before any device is touched, so a bad
// shape is an argument error rather than the same failure on every device.
struct Problem {
  std::string op;        // "gemm" or "conv2d", the row's op column
  OpKind kind = OpKind::Gemm;
  std::string workload;  // short label for the table
  Json params;
  DType dtype = DType::f32;
  Graph graph;
  double flops = 0.0;
  double bytes = 0.0;
};

// Each input, weight and output moved once: the least traffic any implementation can get away with.
double minimum_bytes(const Graph& graph);

// Short labels made from the sizes, e.g. "512x512x512 NT" and "1x64x56x56 k64 3x3 p1".
std::string gemm_label(const cases::GemmProblem& p);
std::string conv_label(const cases::ConvProblem& p);

// `workload` overrides the label made from the sizes (suites use layer names).
Problem gemm_problem(const cases::GemmProblem& p, std::string workload = {});
Problem conv_problem(const cases::ConvProblem& p, std::uint64_t seed, std::string workload = {});

// A device named on the command line, opened up front; or why it could not be opened.
struct Target {
  std::string spec;
  std::string backend;
  std::optional<Device> device;
  std::string error;  // set when `device` is empty: the row for it says "failed" with this
};

// Specs may be given in one argument separated by commas ("cpu:threads=1,opencl:0"); a piece that
// is only key=value belongs to the spec before it ("cpu:threads=1,pin=1"). No specs means every
// device of porta::devices(). Throws porta::Error for a spec naming no backend or no such device;
// a backend that is compiled in but has no device becomes a Target with an error.
std::vector<Target> open_targets(const std::vector<std::string>& specs);

// Who runs a problem: porta's own kernels, porta's vendor provider (CompileOptions::impl), or
// OpenBLAS called directly, a reference beside oneDNN for f32 GEMM on cpu devices that is not
// part of porta (openblas.hpp).
enum class Provider { Native, Vendor, OpenBlas };
std::string_view to_string(Provider provider);  // "native", "vendor", "openblas"

struct RunSettings {
  TimingPolicy timing;
  CompileOptions compile;  // its impl follows `provider`
  std::vector<Provider> providers{Provider::Native};  // what run_providers runs, and so run_all and the suites
  Provider provider = Provider::Native;               // what run_problem runs
  bool verify = false;
  std::string oracle = "ref";    // the device verification checks against: ref, or cpu where ref is too slow
  std::string no_verify_reason;  // set when verification was asked for but is out of reach (too slow on both)
  std::uint64_t seed = 42;
};

// `settings` set to run `provider`.
RunSettings with_provider(RunSettings settings, Provider provider);

// One provider's run of a problem on a target, compiled and run once (`row` holds the compile and
// first-run times), to be timed by `sample` and then checked by `verify` where the settings ask.
// A run that could not start has no `sample`, and its row says why (unsupported, failed).
struct Prepared {
  Row row;
  Sample sample;
  std::function<void(Row&)> verify;
};

// A run by a library outside porta's providers (OpenBLAS, oneDNN's backward primitives): its row,
// "unsupported" with `unsupported` where that is not empty, "failed" where the device did not open;
// else "ok", for the caller to fill in.
Prepared outside_run(const Problem& problem, const Target& target, const RunSettings& settings,
                     const std::string& unsupported);

// settings.provider's run. Never throws for device trouble, as the functions below.
Prepared prepare_problem(const Problem& problem, const Target& target, const RunSettings& settings);

// settings.provider's row: prepared, timed, verified.
Row run_problem(const Problem& problem, const Target& target, const RunSettings& settings);

// The rows of every provider in settings.providers, in that order, timed together in turns
// (measure_rounds) so that they share the host's conditions; one after another where their data
// together would not fit in 80 % of the device's memory, and OpenBLAS on its own on more than
// one thread.
std::vector<Row> run_providers(const Problem& problem, const Target& target, const RunSettings& settings);

// The parts of a row that every provider fills alike: the row's identity, the timing and rates,
// and the verification.
Row row_for(const Problem& problem, const Target& target, const RunSettings& settings);
void record_timing(Row& row, const Timing& timing, const Problem& problem);
void record_verification(Row& row, const cases::Verification& v);
// Checks `got`, the output of problem.graph computed outside porta (OpenBLAS, oneDNN) from the
// inputs cases::set_random_inputs gives it, against the oracle's run of the graph.
void verify_host_output(Row& row, const Problem& problem, std::span<const float> got, const RunSettings& settings);
// A row that ends with what compiling or running it threw: unsupported where porta says so.
void record_exception(Row& row, const std::exception_ptr& thrown);

// Every problem on every target with every impl (run_providers), problem-major so that devices
// and providers sit next to each other.
// With `progress`, one line per finished row goes to stderr.
std::vector<Row> run_all(const std::vector<Problem>& problems, const std::vector<Target>& targets,
                         const RunSettings& settings, bool progress);

// One line on stderr for a finished row, the `done`-th of `total`.
void print_progress(const Row& row, std::size_t done, std::size_t total);

bool any_failed(const std::vector<Row>& rows);

}  // namespace porta::bench
