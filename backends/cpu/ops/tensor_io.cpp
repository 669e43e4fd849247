#include "backends/cpu/ops/tensor_io.hpp"

#include "backends/cpu/kernels/dtype_convert.hpp"

namespace porta::detail {

void load_f32(const HostTensor& t, std::int64_t begin, std::int64_t count, float* dst) {
  widen_to_f32(t.data, t.dtype(), begin, count, dst);
}

void store_f32(const HostTensor& t, std::int64_t begin, std::int64_t count, const float* src) {
  narrow_from_f32(src, count, t.data, t.dtype(), begin);
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
