#pragma once
// f16 <-> f32 over a contiguous run, compiled per instruction set (vector_kernels.hpp): the
// branch-free conversions of porta/dtype.hpp vectorise, 16 lanes wide with AVX-512 against 4 in
// the baseline SSE2 build. f16 tensors convert through these on every read and write of a CPU
// kernel, and f16 GEMM operands while they are packed.
#include <cstdint>

#include "porta/dtype.hpp"

namespace porta::detail {

using WidenF16Fn = void (*)(const std::uint16_t* src, float* dst, std::int64_t count);
using NarrowF16Fn = void (*)(const float* src, std::uint16_t* dst, std::int64_t count);

[[gnu::always_inline]] inline void widen_f16_body(const std::uint16_t* src, float* dst, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] = f16_to_f32(src[i]);
}

[[gnu::always_inline]] inline void narrow_f16_body(const float* src, std::uint16_t* dst, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] = f32_to_f16(src[i]);
}

}  // namespace porta::detail
