#include "backends/cpu/ops/tensor_io.hpp"

#include <cstring>

namespace porta::detail {

void load_f32(const HostTensor& t, std::int64_t begin, std::int64_t count, float* dst) {
  switch (t.dtype()) {
    case DType::f32:
      std::memcpy(dst, reinterpret_cast<const float*>(t.data) + begin, count * sizeof(float));
      return;
    case DType::f16: {
      const auto* src = reinterpret_cast<const std::uint16_t*>(t.data) + begin;
      for (std::int64_t i = 0; i < count; ++i) dst[i] = f16_to_f32(src[i]);
      return;
    }
    case DType::bf16: {
      const auto* src = reinterpret_cast<const std::uint16_t*>(t.data) + begin;
      for (std::int64_t i = 0; i < count; ++i) dst[i] = bf16_to_f32(src[i]);
      return;
    }
  }
}

void store_f32(const HostTensor& t, std::int64_t begin, std::int64_t count, const float* src) {
  switch (t.dtype()) {
    case DType::f32: {
      float* dst = reinterpret_cast<float*>(t.data) + begin;
      if (dst != src) std::memcpy(dst, src, count * sizeof(float));
      return;
    }
    case DType::f16: {
      auto* dst = reinterpret_cast<std::uint16_t*>(t.data) + begin;
      for (std::int64_t i = 0; i < count; ++i) dst[i] = f32_to_f16(src[i]);
      return;
    }
    case DType::bf16: {
      auto* dst = reinterpret_cast<std::uint16_t*>(t.data) + begin;
      for (std::int64_t i = 0; i < count; ++i) dst[i] = f32_to_bf16(src[i]);
      return;
    }
  }
}

// Conversions are large enough to be worth spreading over the arena's threads.
constexpr std::int64_t conversion_chunk = 1 << 14;

F32Input::F32Input(const HostTensor& t) {
  if (t.dtype() == DType::f32) {
    data_ = reinterpret_cast<const float*>(t.data);
    return;
  }
  copy_.resize(t.numel());
  parallel_chunks(t.numel(), conversion_chunk, [&](std::int64_t begin, std::int64_t count) {
    load_f32(t, begin, count, copy_.data() + begin);
  });
  data_ = copy_.data();
}

F32Output::F32Output(const HostTensor& t) : tensor_(t) {
  if (t.dtype() == DType::f32) {
    data_ = reinterpret_cast<float*>(t.data);
  } else {
    scratch_.resize(t.numel());
    data_ = scratch_.data();
  }
}

}  // namespace porta::detail
