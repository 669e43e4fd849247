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

Timing measure(const Sample& run, const TimingPolicy& policy) {
  const double warmup_start = steady_seconds();
  while (steady_seconds() - warmup_start < policy.warmup_s) run();

  std::vector<double> host, device;
  host.reserve(1024);  // no allocation inside the loop in the common case
  device.reserve(1024);
  bool all_device = true;
  const double start = steady_seconds();
  double elapsed = 0.0;
  for (;;) {
    const double before = steady_seconds();
    const std::optional<double> on_device = run();
    const double after = steady_seconds();
    host.push_back(after - before);
    if (on_device) device.push_back(*on_device);
    all_device = all_device && on_device;
    elapsed = after - start;
    const bool enough = static_cast<int>(host.size()) >= policy.min_samples && elapsed >= policy.min_time_s;
    if (enough || elapsed >= policy.max_time_s) break;
  }
  const Timing on_host = summarize(host);
  Timing t = all_device ? summarize(std::move(device)) : on_host;
  if (all_device) t.timer = "device-event";
  t.host_samples = std::move(host);
  t.host_median_s = on_host.median_s;
  t.host_min_s = on_host.min_s;
  double inside = 0.0;
  for (const double s : t.samples) inside += s;
  if (inside > 0.0) t.overhead = std::max(0.0, elapsed - inside) / inside;
  return t;
}

}  // namespace porta::bench
