#include "timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace porta::bench {

double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

Timing summarize(std::vector<double> samples) {
  Timing t;
  t.samples = samples;
  if (samples.empty()) return t;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  t.min_s = samples.front();
  t.median_s = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(n)));
  t.p90_s = samples[std::max<std::size_t>(rank, 1) - 1];
  t.max_s = samples.back();
  for (const double s : samples) t.mean_s += s / static_cast<double>(n);
  return t;
}

std::optional<double> device_seconds(const Executable& exe) {
  const RunTime t = exe.last_run_time();
  return t.clock == RunClock::Device ? std::optional(t.seconds) : std::nullopt;
}

namespace {

// One run's samples so far, and the time spent taking them (its turns, without the untimed runs).
struct Series {
  std::vector<double> host, device;
  bool all_device = true;
  double elapsed = 0.0;
  bool done = false;
  std::exception_ptr error;

  Series() {
    host.reserve(1024);  // no allocation inside the loop in the common case
    device.reserve(1024);
  }
};

Timing summarize_series(Series& s) {
  const Timing on_host = summarize(s.host);
  Timing t = s.all_device ? summarize(std::move(s.device)) : on_host;
  if (s.all_device) t.timer = "device-event";
  t.host_samples = std::move(s.host);
  t.host_median_s = on_host.median_s;
  t.host_min_s = on_host.min_s;
  double inside = 0.0;
  for (const double x : t.samples) inside += x;
  if (inside > 0.0) t.overhead = std::max(0.0, s.elapsed - inside) / inside;
  return t;
}

// One turn of `run`: where it takes turns with other runs (`in_turns`), untimed runs first, at
// least one and for settle_s (the first turn too: the others' warm-ups came after its own), then
// samples until the turn's time is up or the series has what `policy` asks.
void take_turn(const Sample& run, Series& s, const TimingPolicy& policy, bool in_turns) {
  if (in_turns) {
    const double settle_start = steady_seconds();
    do run();
    while (steady_seconds() - settle_start < settle_s);
  }
  const double turn_start = steady_seconds();
  for (;;) {
    const double before = steady_seconds();
    const std::optional<double> on_device = run();
    const double after = steady_seconds();
    s.host.push_back(after - before);
    if (on_device) s.device.push_back(*on_device);
    s.all_device = s.all_device && on_device;
    const double elapsed = s.elapsed + (after - turn_start);
    const bool enough = static_cast<int>(s.host.size()) >= policy.min_samples && elapsed >= policy.min_time_s;
    s.done = enough || elapsed >= policy.max_time_s;
    if (s.done || after - turn_start >= round_s) break;
  }
  s.elapsed += steady_seconds() - turn_start;
}

}  // namespace

std::vector<Timing> measure_rounds(const std::vector<Sample>& runs, const TimingPolicy& policy) {
  std::vector<Series> series(runs.size());
  const auto guarded = [&](std::size_t i, const auto& body) {
    try {
      body();
    } catch (...) {  // the run's series ends here; the others go on
      series[i].error = std::current_exception();
      series[i].done = true;
    }
  };
  for (std::size_t i = 0; i < runs.size(); ++i)
    guarded(i, [&] {
      const double warmup_start = steady_seconds();
      while (steady_seconds() - warmup_start < policy.warmup_s) runs[i]();
    });
  for (bool all_done = false; !all_done;) {
    all_done = true;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (!series[i].done) guarded(i, [&] { take_turn(runs[i], series[i], policy, runs.size() > 1); });
      all_done = all_done && series[i].done;
    }
  }
  std::vector<Timing> timings;
  for (Series& s : series) {
    timings.push_back(summarize_series(s));
    timings.back().error = s.error;
  }
  return timings;
}

Timing measure(const Sample& run, const TimingPolicy& policy) { return measure_rounds({run}, policy).front(); }

}  // namespace porta::bench
