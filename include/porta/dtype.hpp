#pragma once
// Storage dtypes. Arithmetic is at least f32 on every backend; f16 and bf16 are storage formats.
// i64, i32 and bool (one byte, 0 or 1) hold indices and masks: the ops that only move, index,
// compare or select take them, arithmetic refuses them (Graph's builder says so).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace porta {

enum class DType : std::uint8_t { f32, f16, bf16, i64, i32, boolean };

// The float storage dtypes, which every op takes.
inline constexpr DType all_dtypes[] = {DType::f32, DType::f16, DType::bf16};
// The index and mask dtypes.
inline constexpr DType integer_dtypes[] = {DType::i64, DType::i32, DType::boolean};

constexpr bool is_float(DType t) noexcept { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

constexpr std::size_t size_of(DType t) noexcept {
  switch (t) {
    case DType::f32: case DType::i32: return 4;
    case DType::f16: case DType::bf16: return 2;
    case DType::i64: return 8;
    case DType::boolean: return 1;
  }
  return 4;
}

std::string_view to_string(DType t) noexcept;  // "f32", "f16", "bf16", "i64", "i32", "bool"

// Parses a name to_string gives; throws porta::Error(InvalidArgument) naming the valid ones.
DType parse_dtype(std::string_view text);

// IEEE binary16 <-> binary32, round to nearest even; overflow becomes infinity, NaN stays NaN.
// Without branches, so that loops over them vectorise: f16 GEMM operands and outputs convert
// through these, and a data-dependent rounding branch mispredicted on every other element.
constexpr std::uint16_t f32_to_f16(float value) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7fffffffu;
  // Normal in f16: rebias the exponent and round the 13 dropped bits to nearest even; a carry
  // out of the mantissa moves on to the next exponent.
  const std::uint32_t normal = (abs - 0x38000000u + 0xfffu + ((abs >> 13) & 1u)) >> 13;
  // Subnormal in f16: adding 0.5f aligns the value to units of 2^-24 in the low mantissa bits,
  // and the addition rounds to nearest even. (f32 subnormals give 0, flushed to zero or not.)
  const std::uint32_t subnormal = std::bit_cast<std::uint32_t>(std::bit_cast<float>(abs) + 0.5f) - 0x3f000000u;
  const std::uint32_t finite = abs < 0x38800000u ? subnormal : abs >= 0x477ff000u ? 0x7c00u : normal;
  return static_cast<std::uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : finite));  // NaN: quiet
}

constexpr float f16_to_f32(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t magnitude = h & 0x7fffu;
  const std::uint32_t normal = (magnitude << 13) + 0x38000000u;  // rebias the exponent: 127 - 15
  const std::uint32_t inf_nan = normal + 0x38000000u;           // exponent 31 becomes 255
  // A subnormal is its mantissa times 2^-24: exact, and a normal f32, so never flushed.
  const std::uint32_t subnormal = std::bit_cast<std::uint32_t>(static_cast<float>(magnitude) * 0x1p-24f);
  const std::uint32_t bits = magnitude < 0x400u ? subnormal : magnitude >= 0x7c00u ? inf_nan : normal;
  return std::bit_cast<float>(sign | bits);
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

// A float converted to i64 as ONNX Cast does: truncated toward zero, NaN gives 0, past i64's range it
// saturates (C++ leaves that undefined). i32 keeps the low 32 bits of it: it wraps (3e9 -> -1294967296).
constexpr std::int64_t truncate_to_i64(double v) noexcept {
  if (!(v == v)) return 0;
  if (v >= 0x1p63) return INT64_MAX;
  if (v <= -0x1p63) return INT64_MIN;
  return static_cast<std::int64_t>(v);
}

// The bits that store `value` in dtype t, in the low size_of(t) bytes (little-endian): all 32
// for f32, the low 16 for f16 and bf16, an integer dtype's value truncated toward zero (i32 wrapping,
// truncate_to_i64), a bool's value != 0.
constexpr std::uint64_t storage_bits(float value, DType t) noexcept {
  switch (t) {
    case DType::f16: return f32_to_f16(value);
    case DType::bf16: return f32_to_bf16(value);
    case DType::f32: return std::bit_cast<std::uint32_t>(value);
    case DType::i64: return static_cast<std::uint64_t>(truncate_to_i64(value));
    case DType::i32: return static_cast<std::uint32_t>(static_cast<std::int32_t>(truncate_to_i64(value)));
    case DType::boolean: return value != 0.0f ? 1 : 0;
  }
  return 0;
}

// Element i of an integer or bool buffer, exactly.
inline std::int64_t load_as_i64(const std::byte* data, std::size_t i, DType t) noexcept {
  switch (t) {
    case DType::i64: return reinterpret_cast<const std::int64_t*>(data)[i];
    case DType::i32: return reinterpret_cast<const std::int32_t*>(data)[i];
    case DType::boolean: return static_cast<std::int64_t>(reinterpret_cast<const std::uint8_t*>(data)[i] != 0);
    default: return 0;
  }
}

// Writes element i of an integer or bool buffer (i32 keeps the low 32 bits, as a wrap).
inline void store_from_i64(std::byte* data, std::size_t i, DType t, std::int64_t v) noexcept {
  switch (t) {
    case DType::i64: reinterpret_cast<std::int64_t*>(data)[i] = v; break;
    case DType::i32: reinterpret_cast<std::int32_t*>(data)[i] = static_cast<std::int32_t>(v); break;
    case DType::boolean: reinterpret_cast<std::uint8_t*>(data)[i] = v != 0 ? 1 : 0; break;
    default: break;
  }
}

// Reads or writes element i of a buffer in the given storage dtype, as float (integers round to
// the nearest float on load and are truncated toward zero on store, as truncate_to_i64 says).
inline float load_as_f32(const std::byte* data, std::size_t i, DType t) noexcept {
  switch (t) {
    case DType::f32: return reinterpret_cast<const float*>(data)[i];
    case DType::f16: return f16_to_f32(reinterpret_cast<const std::uint16_t*>(data)[i]);
    case DType::bf16: return bf16_to_f32(reinterpret_cast<const std::uint16_t*>(data)[i]);
    case DType::i64: case DType::i32: case DType::boolean: return static_cast<float>(load_as_i64(data, i, t));
  }
  return 0.0f;
}

inline void store_from_f32(std::byte* data, std::size_t i, DType t, float v) noexcept {
  switch (t) {
    case DType::f32: reinterpret_cast<float*>(data)[i] = v; break;
    case DType::f16: reinterpret_cast<std::uint16_t*>(data)[i] = f32_to_f16(v); break;
    case DType::bf16: reinterpret_cast<std::uint16_t*>(data)[i] = f32_to_bf16(v); break;
    case DType::i64: case DType::i32: case DType::boolean:
      store_from_i64(data, i, t, t == DType::boolean ? v != 0.0f : truncate_to_i64(v));
      break;
  }
}

}  // namespace porta
