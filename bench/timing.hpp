#pragma once
// How porta-bench turns repeated runs into numbers (the methodology in bench/README.md).
#include <functional>
#include <vector>

namespace porta::bench {

struct TimingPolicy {
  double warmup_s = 0.1;    // run for this long before sampling: caches, clocks and thread pools settle
  int min_samples = 10;     // sample until both this many runs ...
  double min_time_s = 0.5;  // ... and this much time are reached,
  double max_time_s = 10.0; // but stop sampling after this long even if min_samples is not reached
};

struct Timing {
  std::vector<double> samples;  // seconds per run, in the order they ran
  double median_s = 0.0;        // the headline number: robust to the odd slow run
  double min_s = 0.0;
  double p90_s = 0.0;
  double mean_s = 0.0;
  double max_s = 0.0;
  // porta-bench's own time in the sampling loop (clock reads, bookkeeping) as a fraction of the
  // time spent inside the runs: the loop's wall time minus the sum of the samples, over that sum.
  double overhead = 0.0;
};

double steady_seconds();  // steady_clock now, in seconds (only differences mean anything)

// Warms up by time, then samples `run` (which must be synchronous) under `policy`. The caller times
// the first run itself, because that one includes compilation and belongs in its own column.
Timing measure(const std::function<void()>& run, const TimingPolicy& policy);

// Median, min, p90 (nearest rank), mean and max of `samples`; all zero when there are none.
Timing summarize(std::vector<double> samples);

}  // namespace porta::bench
