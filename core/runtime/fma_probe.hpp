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

// Vectors of chains a thread keeps for a SIMD width of `lanes` floats: enough to keep every FMA
// unit busy through its latency (two units of 4 cycles on Ice Lake and Zen 4/5 want 8 in flight;
// Zen 1's 256-bit FMA, 5 cycles on two 128-bit halves, about 10), few enough to stay in the
// registers with the scale and shift (24 of AVX-512's 32, 12 of 16).
constexpr int fma_probe_vectors(int lanes) { return lanes >= 16 ? 24 : 12; }

// A backend's probe: `threads` threads (or lanes) of `chains` scalar chains each.
struct FmaProbe {
  // Runs every thread's chains for `steps` steps and returns the seconds it took, by the device's
  // own clock.
  std::function<double(std::int64_t steps)> run;
  std::function<void(std::span<float> sums)> read_sums;  // each thread's sum after the last run
  int chains = 0;
  std::int64_t threads = 0;
};

// The rate of `probe`, in GFLOP/s (a step is 2 * chains * threads flops). The steps double until
// one run takes 20 ms (a clock tick or a launch is then noise), and the fastest of 5 such runs is
// the rate: a ceiling is what the device can reach. Then a run of fma_check_steps must leave every
// sum at fma_chains_sum's value: the flops counted must be the flops run. Throws Internal where a
// sum is wrong, and where a run takes a second on the host's clock and under 20 ms on the
// device's (its timer is broken).
double measure_fma_probe(const FmaProbe& probe, std::string_view device);

// The sum of `chains` chains, chain i starting at i, after `steps` steps of fma_scale and fma_shift.
double fma_chains_sum(int chains, std::int64_t steps);

}  // namespace porta::detail
