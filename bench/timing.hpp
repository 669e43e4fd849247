#pragma once
// How porta-bench turns repeated runs into numbers (the methodology in bench/README.md).
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "porta/executable.hpp"

namespace porta::bench {

struct TimingPolicy {
  double warmup_s = 0.1;    // run for this long before sampling: caches, clocks and thread pools settle
  int min_samples = 10;     // sample until both this many runs ...
  double min_time_s = 0.5;  // ... and this much time are reached,
  double max_time_s = 10.0; // but stop sampling after this long even if min_samples is not reached
};

struct Timing {
  // "device-event" when the backend timed every sample with the device's own events
  // (Executable::last_run_time with RunClock::Device), else "host": steady_clock around each run.
  std::string timer = "host";
  std::vector<double> samples;  // seconds per run on `timer`'s clock, in the order they ran
  double median_s = 0.0;        // the headline number: robust to the odd slow run
  double min_s = 0.0;
  double p90_s = 0.0;
  double mean_s = 0.0;
  double max_s = 0.0;
  std::vector<double> host_samples;  // steady_clock around each run (device work, launch and wait)
  double host_median_s = 0.0;
  double host_min_s = 0.0;
  // Time in the sampling loop beyond the timed samples, as a fraction of them: the loop's wall time
  // minus the sum of the samples, over that sum. With the host timer that is porta-bench's own
  // bookkeeping; with device events it also holds the host's launch and wait around the device work.
  double overhead = 0.0;
  std::exception_ptr error;  // what a run threw (measure_rounds): its sampling stopped there
};

double steady_seconds();  // steady_clock now, in seconds (only differences mean anything)

// One synchronous run; returns the device's own time for it, or nullopt where there is none.
using Sample = std::function<std::optional<double>()>;

// Warms up by time, then samples `run` under `policy`. The caller times the first run itself,
// because that one includes compilation and belongs in its own column.
Timing measure(const Sample& run, const TimingPolicy& policy);

// How long one of several runs sampled together takes its turn before the next (measure_rounds).
inline constexpr double round_s = 0.1;

// How long each of its turns opens with untimed runs (measure_rounds): they bring back the run's
// data that the others' turns evicted from the caches, and they give the others' idle threads
// time to go quiet. Those of libgomp, under oneDNN, spin for milliseconds after each parallel
// region and take a core from the run that follows.
inline constexpr double settle_s = 0.02;

// Samples several runs, each under `policy`, in turns of about round_s, so that all of them see
// the same conditions of a shared host: its load moves their times together, and the ratios of
// their medians compare like with like. Each warms up first, and each turn opens with settle_s of
// untimed runs. One run alone samples without pause, as `measure` does. A run that throws stops
// there, its exception kept in its Timing, and the others go on.
std::vector<Timing> measure_rounds(const std::vector<Sample>& runs, const TimingPolicy& policy);

// The device-event time of `exe`'s last run, or nullopt where its backend measured it on the host.
std::optional<double> device_seconds(const Executable& exe);

// Median, min, p90 (nearest rank), mean and max of `samples` (timer "host"); all zero when there are none.
Timing summarize(std::vector<double> samples);

}  // namespace porta::bench
