// Storage dtypes: f16 and bf16 conversions, exhaustively where the space is small.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <random>

#include "test_util.hpp"

namespace porta::test {
namespace {

float bits_to_f32(std::uint32_t b) { return std::bit_cast<float>(b); }

// The exact value of an f16 bit pattern, computed independently of the library.
double f16_value(std::uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0x1f) return mant ? NAN : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  return sign * std::ldexp(1024 + mant, exp - 25);
}

}  // namespace

TEST_SUITE("dtype") {
  TEST_CASE("f16: every bit pattern converts to its exact value and back") {
    int checked = 0;
    for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
      const auto h = static_cast<std::uint16_t>(bits);
      const float f = f16_to_f32(h);
      const double exact = f16_value(h);
      if (std::isnan(exact)) {
        CHECK(std::isnan(f));
        CHECK(std::isnan(f16_to_f32(f32_to_f16(f))));  // NaN stays NaN (quieted)
        continue;
      }
      if (static_cast<double>(f) != exact || f32_to_f16(f) != h) {
        CAPTURE(bits);
        CHECK(static_cast<double>(f) == exact);
        CHECK(f32_to_f16(f) == h);
      }
      ++checked;
    }
    CHECK(checked == 65536 - 2 * 1023);  // all but the NaNs
    CHECK(std::signbit(f16_to_f32(0x8000)));
  }

  TEST_CASE("f16: rounding to nearest even between every pair of neighbours") {
    // Positive finite patterns in order are increasing values; the midpoint of two neighbours is
    // exact in f32 and must go to the even one, anything past it to the nearer one.
    for (std::uint16_t h = 0; h < 0x7bff; ++h) {
      const float lo = f16_to_f32(h), hi = f16_to_f32(static_cast<std::uint16_t>(h + 1));
      const float mid = (lo + hi) / 2;
      const std::uint16_t even = (h & 1) ? static_cast<std::uint16_t>(h + 1) : h;
      if (f32_to_f16(mid) != even || f32_to_f16(std::nextafter(mid, 0.0f)) != h ||
          f32_to_f16(std::nextafter(mid, INFINITY)) != h + 1 || f32_to_f16(-mid) != (even | 0x8000)) {
        CAPTURE(h);
        CHECK(f32_to_f16(mid) == even);
        CHECK(f32_to_f16(std::nextafter(mid, 0.0f)) == h);
        CHECK(f32_to_f16(std::nextafter(mid, INFINITY)) == h + 1);
        CHECK(f32_to_f16(-mid) == (even | 0x8000));
      }
    }
  }

  TEST_CASE("f16: overflow, infinity, NaN, subnormals and tiny values") {
    CHECK(f32_to_f16(65504.0f) == 0x7bff);                          // largest finite
    CHECK(f32_to_f16(65519.99f) == 0x7bff);                         // below the midpoint to 65536
    CHECK(f32_to_f16(65520.0f) == 0x7c00);                          // the midpoint rounds to even: infinity
    CHECK(f32_to_f16(1e6f) == 0x7c00);
    CHECK(f32_to_f16(-1e6f) == 0xfc00);
    CHECK(f32_to_f16(INFINITY) == 0x7c00);
    CHECK(f32_to_f16(-INFINITY) == 0xfc00);
    CHECK(std::isnan(f16_to_f32(f32_to_f16(NAN))));
    CHECK(std::isnan(f16_to_f32(f32_to_f16(bits_to_f32(0x7f800001)))));  // a NaN with only low bits set
    CHECK(f32_to_f16(std::ldexp(1.0f, -24)) == 0x0001);             // smallest subnormal
    CHECK(f32_to_f16(std::ldexp(1.0f, -25)) == 0x0000);             // half of it: ties to even, zero
    CHECK(f32_to_f16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001);
    CHECK(f32_to_f16(std::ldexp(3.0f, -25)) == 0x0002);             // 1.5 subnormal ulps: ties to even
    CHECK(f32_to_f16(std::ldexp(1.0f, -14)) == 0x0400);             // smallest normal
    CHECK(f32_to_f16(std::ldexp(1023.0f, -24)) == 0x03ff);          // largest subnormal
    CHECK(f32_to_f16(1e-10f) == 0x0000);
    CHECK(f32_to_f16(-1e-10f) == 0x8000);
    CHECK(f32_to_f16(bits_to_f32(1)) == 0x0000);                    // f32 subnormals flush to zero in f16
    CHECK(f32_to_f16(1.0f) == 0x3c00);
    CHECK(f32_to_f16(-2.0f) == 0xc000);
  }

#if defined(__FLT16_MAX__)
  TEST_CASE("f16: agrees with the compiler's _Float16 on random f32 bit patterns") {
    std::mt19937 rng(42);
    int mismatches = 0;
    for (int i = 0; i < 1'000'000; ++i) {
      const float f = bits_to_f32(static_cast<std::uint32_t>(rng()));
      if (std::isnan(f)) continue;
      const auto want = std::bit_cast<std::uint16_t>(static_cast<_Float16>(f));
      if (f32_to_f16(f) != want && mismatches++ < 5) {
        CAPTURE(std::bit_cast<std::uint32_t>(f));
        CHECK(f32_to_f16(f) == want);
      }
    }
    CHECK(mismatches == 0);
  }
#endif

  TEST_CASE("bf16: round to nearest even, ties included") {
    CHECK(f32_to_bf16(1.0f) == 0x3f80);
    CHECK(f32_to_bf16(bits_to_f32(0x3f808000)) == 0x3f80);  // tie, even below
    CHECK(f32_to_bf16(bits_to_f32(0x3f818000)) == 0x3f82);  // tie, even above
    CHECK(f32_to_bf16(bits_to_f32(0x3f808001)) == 0x3f81);  // just past the tie
    CHECK(f32_to_bf16(bits_to_f32(0x3f807fff)) == 0x3f80);  // just before it
    CHECK(f32_to_bf16(bits_to_f32(0xbf818000)) == 0xbf82);  // negative tie
    CHECK(f32_to_bf16(bits_to_f32(0x3fffffff)) == 0x4000);  // carry into the exponent
    // Every bf16 pattern round-trips, and every f32 in a neighbourhood rounds to the nearest.
    for (std::uint32_t b = 0; b <= 0xffff; ++b) {
      const auto h = static_cast<std::uint16_t>(b);
      const float f = bf16_to_f32(h);
      if (std::isnan(f)) {
        CHECK(std::isnan(bf16_to_f32(f32_to_bf16(f))));
        continue;
      }
      CHECK(std::bit_cast<std::uint32_t>(f) == b << 16);
      if (f32_to_bf16(f) != h) CHECK(f32_to_bf16(f) == h);
    }
  }

  TEST_CASE("bf16: infinity, overflow, NaN and subnormals") {
    CHECK(f32_to_bf16(INFINITY) == 0x7f80);
    CHECK(f32_to_bf16(-INFINITY) == 0xff80);
    CHECK(f32_to_bf16(bits_to_f32(0x7f7fffff)) == 0x7f80);  // max float rounds up to infinity
    CHECK(f32_to_bf16(bits_to_f32(0x7f7f7fff)) == 0x7f7f);  // largest finite bf16
    // A NaN whose payload lives only in the low 16 bits must not truncate to infinity.
    const std::uint16_t nan = f32_to_bf16(bits_to_f32(0x7f800001));
    CHECK(std::isnan(bf16_to_f32(nan)));
    CHECK(std::isnan(bf16_to_f32(f32_to_bf16(bits_to_f32(0xffc00000)))));
    CHECK(f32_to_bf16(bits_to_f32(0x00008000)) == 0x0000);  // subnormal tie to even zero
    CHECK(f32_to_bf16(bits_to_f32(0x00018000)) == 0x0002);  // subnormal tie to even two
    CHECK(f32_to_bf16(bits_to_f32(0x00010001)) == 0x0001);
    CHECK(f32_to_bf16(-0.0f) == 0x8000);
  }

  TEST_CASE("load_as_f32 and store_from_f32 in every dtype") {
    for (const DType t : all_dtypes) {
      const std::string dtype_name(to_string(t));
      CAPTURE(dtype_name);
      std::vector<std::byte> buffer(4 * size_of(t));
      const float values[] = {1.5f, -0.25f, 1024.0f, 3.0f};
      for (std::size_t i = 0; i < 4; ++i) store_from_f32(buffer.data(), i, t, values[i]);
      for (std::size_t i = 0; i < 4; ++i) CHECK(load_as_f32(buffer.data(), i, t) == values[i]);
    }
    std::vector<std::byte> h(2);
    store_from_f32(h.data(), 0, DType::f16, 1.0f / 3.0f);
    CHECK(load_as_f32(h.data(), 0, DType::f16) == f16_to_f32(f32_to_f16(1.0f / 3.0f)));
    CHECK(size_of(DType::f32) == 4);
    CHECK(size_of(DType::f16) == 2);
    CHECK(size_of(DType::bf16) == 2);
  }

  TEST_CASE("parse_dtype and to_string round trip") {
    for (const DType t : all_dtypes) CHECK(parse_dtype(to_string(t)) == t);
    for (const DType t : integer_dtypes) CHECK(parse_dtype(to_string(t)) == t);
    CHECK(parse_dtype("bf16") == DType::bf16);
    CHECK(parse_dtype("bool") == DType::boolean);
    check_error([] { parse_dtype("half"); }, ErrorCode::InvalidArgument,
                {"'half'", "f32, f16, bf16, i64, i32 or bool"});
  }

  TEST_CASE("integer and bool storage: sizes, truncation toward zero, != 0, exact int64") {
    CHECK(size_of(DType::i64) == 8);
    CHECK(size_of(DType::i32) == 4);
    CHECK(size_of(DType::boolean) == 1);
    for (const DType t : integer_dtypes) CHECK_FALSE(is_float(t));
    for (const DType t : all_dtypes) CHECK(is_float(t));
    std::vector<std::byte> buffer(8 * 4);
    const float values[] = {-2.75f, 2.75f, -0.5f, 0.0f};
    const std::int64_t truncated[] = {-2, 2, 0, 0}, nonzero[] = {1, 1, 1, 0};
    for (const DType t : integer_dtypes) {
      const std::string dtype_name(to_string(t));
      CAPTURE(dtype_name);
      for (std::size_t i = 0; i < 4; ++i) store_from_f32(buffer.data(), i, t, values[i]);
      for (std::size_t i = 0; i < 4; ++i)
        CHECK(load_as_i64(buffer.data(), i, t) == (t == DType::boolean ? nonzero[i] : truncated[i]));
    }
    constexpr std::int64_t big = (std::int64_t{1} << 62) + 1;
    store_from_i64(buffer.data(), 0, DType::i64, big);
    CHECK(load_as_i64(buffer.data(), 0, DType::i64) == big);
    CHECK(truncate_to_i64(std::nan("")) == 0);
    CHECK(truncate_to_i64(1e30) == INT64_MAX);
    CHECK(truncate_to_i64(-1e30) == INT64_MIN);
    CHECK(storage_bits(-1.0f, DType::i64) == ~std::uint64_t{0});
    CHECK(storage_bits(3.5f, DType::boolean) == 1);
  }
}

}  // namespace porta::test
