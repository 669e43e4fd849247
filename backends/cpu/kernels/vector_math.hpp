#pragma once
// Sigmoid, SiLU, tanh, erf and GELU in a form the compiler vectorises: float arithmetic and bit
// operations with no branch and no libm call (std::exp is a call per element, which left
// EfficientNet-B0 spending half its time in the SiLU of its epilogues, and std::erf a tenth of
// ViT-B/16's in its GELUs). Within a few ulp of the double-precision formula wherever the result is
// a normal float (tests/test_cpu_kernels.cpp). Always inline: a copy out of line is compiled for the
// baseline, and GCC 12 called one per element from the AVX2 kernels, while it inlined them for
// AVX-512 (a 1x1 conv on Zen 3: 0.29 ms, with a fused SiLU 5.8 ms; inlined, 0.62 ms).
#include <bit>
#include <cmath>
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
[[gnu::always_inline]] inline float exp_clamped(float x, ExpRange range = {}) {
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

[[gnu::always_inline]] inline float sigmoid_fast(float x, ExpRange range = {}) {
  return 1.0f / (1.0f + exp_clamped(-x, range));
}
// Below -range.hi the clamped exp leaves x / e^88, which is no longer small once |x| passes 1e30 (-1.5
// at -FLT_MAX): SiLU is 0 there, to within a denormal.
[[gnu::always_inline]] inline float silu_fast(float x, ExpRange range = {}) {
  return (x < -range.hi ? 0.0f : x) / (1.0f + exp_clamped(-x, range));
}

// tanh(x) is x + x^3 Q(x^2) below tanh_series_end (a least-squares fit made here, in relative
// error: under 1 ulp as evaluated in float), and 1 - 2 / (1 + e^2|x|) with x's sign from there
// (2 ulp), where the result is past 0.55 and the subtraction loses at most a bit.
constexpr float tanh_series_end = 0.625f;

[[gnu::always_inline]] inline float tanh_fast(float x, ExpRange range = {}) {
  const float a = std::fabs(x), s = x * x;
  float q = -5.798099802e-03f;
  q = q * s + 2.072028112e-02f;
  q = q * s - 5.376380072e-02f;
  q = q * s + 1.333171858e-01f;
  q = q * s - 3.333329151e-01f;
  const float tail = 1.0f - 2.0f / (1.0f + exp_clamped(2.0f * a, range));  // a NaN passes through
  return std::copysign(a < tanh_series_end ? a + a * s * q : tail, x);
}

// exp(-c v^2) for c = 1 or 1/2 (a power of two): v^2 rounded would move the result by up to
// v^2 ulp, so v is split into its 12 leading bits, whose square is exact, and a rest d whose
// exp(-d) a short series gives (d < 0.09 where the result is a normal float).
[[gnu::always_inline]] inline float exp_neg_square(float v, float c, ExpRange range) {
  const float hi = std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) & 0xfffff000u);
  const float d = (v - hi) * (v + hi) * c;
  float p = -1.0f / 120;
  p = p * d + 1.0f / 24;
  p = p * d - 1.0f / 6;
  p = p * d + 0.5f;
  p = p * d - 1.0f;
  p = p * d + 1.0f;
  return exp_clamped(-(hi * hi * c), range) * p;
}

// erf(a) is a P(a^2) below erf_series_end, and erfc(a) is exp(-a^2) t Q(t), t = 1 / (1 + a), from
// erfc_tail_start: least-squares fits in relative error, 3 and 4 ulp as evaluated in float. Past
// erfc_tail_end erf is 1 and erfc below float's normal range.
constexpr float erf_series_end = 0.875f, erfc_tail_start = 0.45f, erfc_tail_end = 9.4f;

[[gnu::always_inline]] inline float erf_series(float a) {  // erf(a) / a
  const float s = a * a;
  float p = -6.285307463e-04f;
  p = p * s + 5.046779290e-03f;
  p = p * s - 2.680047974e-02f;
  p = p * s + 1.128268018e-01f;
  p = p * s - 3.761256933e-01f;
  return p * s + 1.128379107e+00f;
}

[[gnu::always_inline]] inline float erfc_scaled(float a) {  // erfc(a) exp(a^2)
  const float t = 1.0f / (1.0f + a);
  float q = 1.939448953e+00f;
  q = q * t - 9.074039459e+00f;
  q = q * t + 1.834627151e+01f;
  q = q * t - 2.037621498e+01f;
  q = q * t + 1.263640213e+01f;
  q = q * t - 3.477459908e+00f;
  q = q * t - 4.026801512e-02f;
  q = q * t - 3.696672320e-01f;
  q = q * t + 2.894258797e-01f;
  q = q * t + 5.638369918e-01f;
  q = q * t + 5.641970038e-01f;
  return q * t;
}

[[gnu::always_inline]] inline float erf_fast(float x, ExpRange range = {}) {
  const float a = std::fabs(x);
  const float tail = a > erfc_tail_end ? erfc_tail_end : a;  // NaN passes through
  const float big = 1.0f - erfc_scaled(tail) * exp_neg_square(tail, 1.0f, range);
  return std::copysign(a < erf_series_end ? a * erf_series(a) : big, x);
}

// GELU(x) = x/2 (1 + erf(x / sqrt 2)); below 0 as x/2 erfc(|x| / sqrt 2), which 1 + erf would leave
// to cancellation, from the tail's start on and with exp(-x^2/2) from x itself (x / sqrt 2 rounded
// would move it by up to x^2/2 ulp). Below -13.5 the result is a denormal: 0.
[[gnu::always_inline]] inline float gelu_fast(float x, ExpRange range = {}) {
  const float magnitude = std::fabs(x), a = magnitude * 0.707106781f;
  const float series = a * erf_series(a);  // erf(a) while a < erf_series_end
  const float erfc = erfc_scaled(a > erfc_tail_end ? erfc_tail_end : a) *
                     exp_neg_square(magnitude > 13.3f ? 13.3f : magnitude, 0.5f, range);
  const float factor = x < 0.0f ? (a < erfc_tail_start ? 1.0f - series : erfc)  // erfc(a)
                                : (a < erf_series_end ? 1.0f + series : 2.0f - erfc);  // 1 + erf(a)
  return 0.5f * (x < -13.5f ? 0.0f : x) * factor;
}

// GELU's tanh form, x/2 (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3): no
// cancellation. Below -10.5 the result is a denormal: 0.
[[gnu::always_inline]] inline float gelu_tanh_fast(float x, ExpRange range = {}) {
  const float u = 0.797884561f * (x + 0.044715f * x * x * x);
  return (x < -10.5f ? 0.0f : x) * sigmoid_fast(2.0f * u, range);
}

// The activations as functions of one float for a loop's body, each made before its loop so that it
// holds the range as opaque_exp_range gives it.
template <float (*F)(float, ExpRange)> struct RangeRun {
  ExpRange range = opaque_exp_range();
  [[gnu::always_inline]] float operator()(float x) const { return F(x, range); }
};
using SigmoidRun = RangeRun<sigmoid_fast>;
using TanhRun = RangeRun<tanh_fast>;
using SiluRun = RangeRun<silu_fast>;
using ErfRun = RangeRun<erf_fast>;
using GeluRun = RangeRun<gelu_fast>;
using GeluTanhRun = RangeRun<gelu_tanh_fast>;

}  // namespace porta::detail
