#include "core/runtime/fma_probe.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "porta/error.hpp"

namespace porta::detail {

double measure_fma_probe(const FmaProbe& probe, std::string_view device) {
  constexpr double long_enough_s = 0.02, host_limit_s = 1.0;
  const auto timed = [&](std::int64_t steps) {
    const auto start = std::chrono::steady_clock::now();
    const double seconds = probe.run(steps);
    if (seconds < long_enough_s &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > host_limit_s)
      throw Error(ErrorCode::Internal, "device '" + std::string(device) +
                                           "': an FMA probe run took over a second on the host's clock and " +
                                           std::to_string(seconds) + " s on the device's; its timer is broken");
    return seconds;
  };
  std::int64_t steps = 1024;
  double seconds = timed(steps);
  for (; seconds < long_enough_s; seconds = timed(steps)) steps *= 2;
  for (int i = 0; i < 4; ++i) seconds = std::min(seconds, timed(steps));
  const double flops_per_step = 2.0 * probe.chains * static_cast<double>(probe.threads);
  const double gflops = flops_per_step * static_cast<double>(steps) / seconds * 1e-9;
  probe.run(fma_check_steps);
  std::vector<float> sums(static_cast<std::size_t>(probe.threads));
  probe.read_sums(sums);
  const double want = fma_chains_sum(probe.chains, fma_check_steps);
  for (std::size_t i = 0; i < sums.size(); ++i)
    if (!(std::abs(sums[i] - want) <= 1e-5 * want))
      throw Error(ErrorCode::Internal, "device '" + std::string(device) + "': the FMA probe's " +
                                           std::to_string(probe.chains) + " chains of thread " + std::to_string(i) +
                                           " summed to " + std::to_string(sums[i]) + " after " +
                                           std::to_string(fma_check_steps) + " steps, not " + std::to_string(want) +
                                           "; its rate would count flops it did not run");
  return gflops;
}

double fma_chains_sum(int chains, std::int64_t steps) {
  double sum = 0.0;
  for (int i = 0; i < chains; ++i) {
    double x = i;
    for (std::int64_t step = 0; step < steps; ++step) x = x * double{fma_scale} + double{fma_shift};
    sum += x;
  }
  return sum;
}

}  // namespace porta::detail
