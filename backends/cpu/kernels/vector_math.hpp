#pragma once
// Sigmoid and SiLU in a form the compiler vectorises: float arithmetic and bit operations with no
// branch and no libm call (std::exp is a call per element, which left EfficientNet-B0 spending
// half its time in the SiLU of its epilogues). Within a few ulp of the double-precision formula
// wherever the result is a normal float (tests/test_cpu_kernels.cpp).
#include <bit>
#include <cstdint>

namespace porta::detail {

// exp(x) for x clamped to [-87.3, 88.3], where the result and 2^n below stay normal floats: the
// callers only add it to 1 or divide by it, so the clamp moves no result by more than a denormal.
// exp(x) = 2^n exp(r), n = round(x / ln 2), |r| <= ln 2 / 2, exp(r) by a degree-7 polynomial.
inline float exp_clamped(float x) {
  x = x < -87.3f ? -87.3f : x;  // as maxss and minss: a NaN passes through
  x = x > 88.3f ? 88.3f : x;
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

inline float sigmoid_fast(float x) { return 1.0f / (1.0f + exp_clamped(-x)); }
inline float silu_fast(float x) { return x * sigmoid_fast(x); }

}  // namespace porta::detail
