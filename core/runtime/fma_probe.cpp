#include "core/runtime/fma_probe.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "porta/error.hpp"

namespace porta::detail {

double fma_probe_gflops(const std::function<double(std::int64_t steps)>& run, double flops_per_step) {
  constexpr double long_enough_s = 0.02;
  constexpr std::int64_t most_steps = std::int64_t{1} << 40;
  std::int64_t steps = 1024;
  double seconds = run(steps);
  for (; seconds < long_enough_s; seconds = run(steps)) {
    if (steps >= most_steps)
      throw Error(ErrorCode::Internal, "FMA probe: 2^40 steps ran in under 20 ms; the device's timer is broken");
    steps *= 2;
  }
  for (int i = 0; i < 4; ++i) seconds = std::min(seconds, run(steps));
  return flops_per_step * static_cast<double>(steps) / seconds * 1e-9;
}

void check_fma_chains(double sum, int chains, std::string_view device) {
  double want = 0.0;
  for (int i = 0; i < chains; ++i) {
    double x = i;
    for (std::int64_t step = 0; step < fma_check_steps; ++step) x = x * double{fma_scale} + double{fma_shift};
    want += x;
  }
  if (!(std::abs(sum - want) <= 1e-5 * want))
    throw Error(ErrorCode::Internal, "device '" + std::string(device) + "': the FMA probe's " + std::to_string(chains) +
                                         " chains summed to " + std::to_string(sum) + " after " +
                                         std::to_string(fma_check_steps) + " steps, not " + std::to_string(want) +
                                         "; its rate would count flops it did not run");
}

}  // namespace porta::detail
