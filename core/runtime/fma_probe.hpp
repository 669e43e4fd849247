#pragma once
// What every backend's FMA probe (Device::measure_fma_gflops) shares, so that their ceilings are
// measured alike: each runs independent chains of acc = acc * fma_scale + fma_shift on registers,
// chain i of every thread or lane starting at i, and returns the seconds a run took.
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

namespace porta::detail {

// Runtime values, so that no compiler folds the chains; 0.99 per step moves each chain visibly
// toward 100 for the 100 steps of the check below, and keeps it away from overflow and subnormals.
inline constexpr float fma_scale = 0.99f, fma_shift = 1.0f;
inline constexpr std::int64_t fma_check_steps = 100;

// `run(steps)` runs the device's chains for `steps` steps of `flops_per_step` each and returns the
// seconds it took, by the device's own clock. The steps double until one run takes 20 ms (a clock
// tick or a launch is then noise), and the fastest of 5 such runs is the rate, in GFLOP/s: a
// ceiling is what the device can reach. Throws Internal where a run takes a second on the host's
// clock and under 20 ms on the device's: its timer is broken.
double fma_probe_gflops(const std::function<double(std::int64_t steps)>& run, double flops_per_step);

// The sum of `chains` chains, chain i starting at i, after `steps` steps of fma_scale and fma_shift.
double fma_chains_sum(int chains, std::int64_t steps);

// Throws Internal unless each of `sums`, the sum of one thread's (or lane's) `chains` chains after
// fma_check_steps steps, is what those steps give: the flops a probe counts must be the flops it ran.
void check_fma_chains(std::span<const float> sums, int chains, std::string_view device);

}  // namespace porta::detail
