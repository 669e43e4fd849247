#include "backends/cpu/kernels/dtype_convert.hpp"

#include <cstring>

#include "backends/cpu/kernels/vector_kernels.hpp"

namespace porta::detail {

void widen_to_f32(const std::byte* data, DType t, std::int64_t begin, std::int64_t count, float* dst) {
  const auto* src16 = reinterpret_cast<const std::uint16_t*>(data) + begin;
  switch (t) {
    case DType::f32:
      std::memcpy(dst, reinterpret_cast<const float*>(data) + begin, count * sizeof(float));
      return;
    case DType::f16: return vector_kernels().widen_f16(src16, dst, count);
    case DType::bf16:
      for (std::int64_t i = 0; i < count; ++i) dst[i] = bf16_to_f32(src16[i]);
      return;
    case DType::i64: case DType::i32: case DType::boolean:  // only casts read these as float
      for (std::int64_t i = 0; i < count; ++i) dst[i] = load_as_f32(data, static_cast<std::size_t>(begin + i), t);
      return;
  }
}

void narrow_from_f32(const float* src, std::int64_t count, std::byte* data, DType t, std::int64_t begin) {
  auto* dst16 = reinterpret_cast<std::uint16_t*>(data) + begin;
  switch (t) {
    case DType::f32: {
      float* dst = reinterpret_cast<float*>(data) + begin;
      if (dst != src) std::memcpy(dst, src, count * sizeof(float));
      return;
    }
    case DType::f16: return vector_kernels().narrow_f16(src, dst16, count);
    case DType::bf16:
      for (std::int64_t i = 0; i < count; ++i) dst16[i] = f32_to_bf16(src[i]);
      return;
    case DType::i64: case DType::i32: case DType::boolean:  // only casts write these from float
      for (std::int64_t i = 0; i < count; ++i) store_from_f32(data, static_cast<std::size_t>(begin + i), t, src[i]);
      return;
  }
}

}  // namespace porta::detail
