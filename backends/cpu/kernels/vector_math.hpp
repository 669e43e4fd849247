#pragma once
// Sigmoid and SiLU in a form the compiler vectorises: float arithmetic and bit operations with no
// branch and no libm call (std::exp is a call per element, which left EfficientNet-B0 spending
// half its time in the SiLU of its epilogues). Within a few ulp of the double-precision formula
// wherever the result is a normal float (tests/test_cpu_kernels.cpp).
#include <bit>
#include <cstdint>

namespace porta::detail {

// Where exp_clamped clamps its argument: the result and 2^n below stay normal floats there.
struct ExpRange {
  float lo = -87.3f, hi = 88.3f;
};

// The same range as values the optimiser cannot see, for loops to take before they start: with
// the bounds constant, GCC 12 splits a loop's body into a path per side of the clamp (whose
// results it folds) and vectorises the three with masks, which ran SiLU over a run in L1 at 0.27
// ns an element against 0.17 (AVX-512, Zen 5).
inline ExpRange opaque_exp_range() {
  ExpRange range;
  asm("" : "+g"(range.lo), "+g"(range.hi));
  return range;
}

// exp(x) for x clamped to `range`: the callers only add it to 1 or divide by it, so the clamp
// moves no result by more than a denormal.
// exp(x) = 2^n exp(r), n = round(x / ln 2), |r| <= ln 2 / 2, exp(r) by a degree-7 polynomial.
inline float exp_clamped(float x, ExpRange range = {}) {
  x = x < range.lo ? range.lo : x;  // as maxss and minss: a NaN passes through
  x = x > range.hi ? range.hi : x;
  constexpr float round_shift = 12582912.0f;              // 1.5 * 2^23: adding it rounds to an integer
  const float shifted = x * 1.44269504089f + round_shift;
  const float n = shifted - round_shift;
  const std::int32_t exponent = std::bit_cast<std::int32_t>(shifted) - std::bit_cast<std::int32_t>(round_shift);
  const float r = (x - n * 0.693145752f) - n * 1.42860677e-6f;  // ln 2 in two parts: r is exact
  float p = 1.98756915e-4f;
  p = p * r + 1.39819995e-3f;
  p = p * r + 8.33345191e-3f;
  p = p * r + 4.16657959e-2f;
  p = p * r + 1.66666655e-1f;
  p = p * r + 5.00000012e-1f;
  p = p * r * r + r + 1.0f;
  return p * std::bit_cast<float>((exponent + 127) << 23);
}

inline float sigmoid_fast(float x, ExpRange range = {}) { return 1.0f / (1.0f + exp_clamped(-x, range)); }
// Below -range.hi the clamped exp leaves x / e^88, which is no longer small once |x| passes 1e30 (-1.5
// at -FLT_MAX): SiLU is 0 there, to within a denormal.
inline float silu_fast(float x, ExpRange range = {}) {
  return (x < -range.hi ? 0.0f : x) / (1.0f + exp_clamped(-x, range));
}

// The two as functions of one float for a loop's body, each made before its loop so that it
// holds the range as opaque_exp_range gives it.
struct SigmoidRun {
  ExpRange range = opaque_exp_range();
  float operator()(float x) const { return sigmoid_fast(x, range); }
};
struct SiluRun {
  ExpRange range = opaque_exp_range();
  float operator()(float x) const { return silu_fast(x, range); }
};

}  // namespace porta::detail
