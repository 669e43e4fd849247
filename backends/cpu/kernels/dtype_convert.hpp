#pragma once
// Contiguous runs between a storage dtype and the f32 every CPU kernel computes in: f16 in the
// widest instruction set this CPU runs (f16_run.hpp), bf16 and f32 in the baseline build, where
// they are a shift and a copy.
#include <cstddef>
#include <cstdint>

#include "porta/dtype.hpp"

namespace porta::detail {

// dst[i] = element begin + i of `data`, stored as `t`, for i in [0, count).
void widen_to_f32(const std::byte* data, DType t, std::int64_t begin, std::int64_t count, float* dst);

// Element begin + i of `data`, stored as `t`, = src[i], for i in [0, count). `src` may be that
// very f32 storage, which makes it a no-op.
void narrow_from_f32(const float* src, std::int64_t count, std::byte* data, DType t, std::int64_t begin);

}  // namespace porta::detail
