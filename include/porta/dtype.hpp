#pragma once
// Storage dtypes. Arithmetic is at least f32 on every backend; f16 and bf16 are storage formats.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace porta {

enum class DType : std::uint8_t { f32, f16, bf16 };

inline constexpr DType all_dtypes[] = {DType::f32, DType::f16, DType::bf16};

constexpr std::size_t size_of(DType t) noexcept { return t == DType::f32 ? 4 : 2; }

std::string_view to_string(DType t) noexcept;

// Parses "f32", "f16" or "bf16"; throws porta::Error(InvalidArgument) naming the valid ones.
DType parse_dtype(std::string_view text);

// IEEE binary16 <-> binary32, round to nearest even; overflow becomes infinity, NaN stays NaN.
constexpr std::uint16_t f32_to_f16(float value) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);  // NaN
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {  // subnormal or zero in f16
    if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);  // below half the smallest subnormal
    const std::uint32_t exp = abs >> 23;
    const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - exp;  // 14..24
    std::uint32_t half = mant >> shift;
    const std::uint32_t rest = mant & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = ((abs - 0x38000000u) >> 13);
  const std::uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<std::uint16_t>(sign | half);
}

constexpr float f16_to_f32(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return std::bit_cast<float>(sign);
  std::uint32_t e = 113;  // normalise a subnormal
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (e << 23) | ((mant & 0x3ffu) << 13));
}

constexpr std::uint16_t f32_to_bf16(float value) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  const std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

constexpr float bf16_to_f32(std::uint16_t b) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

// Reads or writes element i of a buffer in the given storage dtype.
inline float load_as_f32(const std::byte* data, std::size_t i, DType t) noexcept {
  switch (t) {
    case DType::f32: return reinterpret_cast<const float*>(data)[i];
    case DType::f16: return f16_to_f32(reinterpret_cast<const std::uint16_t*>(data)[i]);
    case DType::bf16: return bf16_to_f32(reinterpret_cast<const std::uint16_t*>(data)[i]);
  }
  return 0.0f;
}

inline void store_from_f32(std::byte* data, std::size_t i, DType t, float v) noexcept {
  switch (t) {
    case DType::f32: reinterpret_cast<float*>(data)[i] = v; break;
    case DType::f16: reinterpret_cast<std::uint16_t*>(data)[i] = f32_to_f16(v); break;
    case DType::bf16: reinterpret_cast<std::uint16_t*>(data)[i] = f32_to_bf16(v); break;
  }
}

}  // namespace porta
