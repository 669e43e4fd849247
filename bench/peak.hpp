#pragma once
// The `peak` suite: each device's own ceilings, measured with porta graphs that run on every
// backend (stream bandwidth, the best GEMM rate per dtype, launch latency) and with the device's
// FMA probe where its backend has one (Device::measure_fma_gflops), and the roofline every other
// result is placed on.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "problems.hpp"
#include "results.hpp"

namespace porta::bench {

// What one device measured. Empty where the probe did not run (skipped, unsupported, failed).
struct Ceilings {
  std::map<std::string, double> stream_gbs;  // "copy", "mul", "add", "triad", as BabelStream counts bytes
  std::map<std::string, double> gflops;      // dtype -> best GEMM probe rate
  std::optional<double> fma_gflops;          // the FMA probe: f32 multiply-adds on registers
  std::optional<double> device_copy_gbs;     // the device's own copy between its buffers (GPU: cudaMemcpyAsync)
  std::optional<double> launch_s;            // median time of a one-element graph
  std::string source;                        // how they were obtained, for the record

  // The roofline's memory ceiling: the best single-kernel stream probe (copy, mul or add; triad
  // is two kernels in porta, see peak.cpp) or the device's own copy, whichever is faster.
  std::optional<double> bandwidth_gbs() const;
  // The compute ceiling of `dtype`: the faster of its GEMM probe and the FMA probe, since porta's
  // kernels compute every dtype in f32 but on matrix units, where only a GEMM shows the rate.
  std::optional<double> compute_gflops(const std::string& dtype) const;
  // compute_gflops of each dtype measured, f32's wherever the FMA probe ran.
  std::map<std::string, double> compute_ceilings() const;
  // The GEMM probe's rate alone: what a suite's time estimates use, a rate kernels reach.
  std::optional<double> gemm_gflops(const std::string& dtype) const;
  bool empty() const { return stream_gbs.empty() && gflops.empty() && !fma_gflops && !device_copy_gbs && !launch_s; }
};

// The probes: stream kernels over arrays of 2^25 elements (`full`, the peak suite) or 2^24 (the
// short set measured at the start of other suites; no triad), square GEMMs of 512 to 4096 per dtype
// (smallest first: a runner skips the sizes that would take too long) and the launch probe.
std::vector<Problem> peak_problems(bool full, const std::vector<DType>& dtypes);
bool is_probe(const Row& row);  // a row of one of those problems, or of the FMA probe

// The device's own probes on `target`, as rows: unsupported where its backend has none. The FMA
// probe (Device::measure_fma_gflops) sets gflops, the copy probe (Device::measure_copy_gbs) gbs.
Row fma_probe_row(const Target& target);
Row copy_probe_row(const Target& target);

// Ceilings of `device` from the probe rows among `rows`.
Ceilings ceilings_from_rows(const std::vector<Row>& rows, const std::string& device, std::string source);

Json to_json(const Ceilings& c);
Ceilings ceilings_from_json(const Json& j);  // tolerant: missing fields stay empty

// Sets ai, pct_peak, pct_roofline and bound of an "ok" row from its device's ceilings.
void place_on_roofline(Row& row, const Ceilings& c);

// BabelStream's --csv format, one line per stream probe row of `rows` on `device`:
// function,num_times,n_elements,sizeof,max_mbytes_per_sec,min_runtime,max_runtime,avg_runtime
void write_babelstream_csv(const std::filesystem::path& path, const std::vector<Row>& rows, const std::string& device);

}  // namespace porta::bench
