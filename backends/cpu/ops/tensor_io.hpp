#pragma once
// Moving tensor data between its storage dtype and the f32 buffers every CPU kernel computes in,
// and the fixed-chunk parallel loop the elementwise kernels share.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/runtime/host_backend.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

// Calls f(Element{}) with the unsigned integer type of `bytes` bytes: for ops that move elements as
// bits, whatever their dtype.
template <class F>
void with_element_bits(std::size_t bytes, F&& f) {
  switch (bytes) {
    case 8: f(std::uint64_t{}); break;
    case 4: f(std::uint32_t{}); break;
    case 2: f(std::uint16_t{}); break;
    default: f(std::uint8_t{}); break;
  }
}

// Elements per chunk of the streaming kernels: small enough that a chunk's f32 buffers stay in L1.
inline constexpr std::int64_t chunk_elements = 2048;
using ChunkBuffer = std::array<float, chunk_elements>;

// Runs body(begin, count) for the chunks [begin, begin + count) that tile [0, total), in parallel.
// Chunk boundaries do not depend on how TBB splits the range.
template <class Body>
void parallel_chunks(std::int64_t total, std::int64_t chunk, const Body& body) {
  const std::int64_t chunks = ceil_div(total, chunk);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, chunks),
                    [&](const tbb::blocked_range<std::int64_t>& range) {
                      for (std::int64_t i = range.begin(); i != range.end(); ++i) {
                        const std::int64_t begin = i * chunk;
                        body(begin, std::min(chunk, total - begin));
                      }
                    });
}

// Converts elements [begin, begin + count) of `t` to f32.
void load_f32(const HostTensor& t, std::int64_t begin, std::int64_t count, float* dst);

// Converts `count` f32 values into elements [begin, begin + count) of `t`. `src` may be the
// tensor's own f32 storage at `begin`, which makes it a no-op.
void store_f32(const HostTensor& t, std::int64_t begin, std::int64_t count, const float* src);

// Elements [begin, begin + count) of `t` as f32: its own storage when it is f32, else `buffer`
// filled with them.
inline const float* read_f32(const HostTensor& t, std::int64_t begin, std::int64_t count,
                             float* buffer) {
  if (t.dtype() == DType::f32) return reinterpret_cast<const float*>(t.data) + begin;
  load_f32(t, begin, count, buffer);
  return buffer;
}

// Where to compute elements from `begin` of `t` before store_f32 puts them in place: its own
// storage when it is f32 (so the store is free), else `buffer`.
inline float* write_f32(const HostTensor& t, std::int64_t begin, float* buffer) {
  return t.dtype() == DType::f32 ? reinterpret_cast<float*>(t.data) + begin : buffer;
}

// A whole tensor as f32: its own storage when it is f32, else a converted copy.
class F32Input {
 public:
  explicit F32Input(const HostTensor& t);
  const float* data() const noexcept { return data_; }

 private:
  std::vector<float> copy_;
  const float* data_ = nullptr;
};

// A whole output written as f32: its own storage when it is f32, else a scratch buffer whose
// ranges `commit` converts into the output once they hold their final values.
class F32Output {
 public:
  explicit F32Output(const HostTensor& t);
  float* data() const noexcept { return data_; }
  // Whether commit converts anything: the output is not f32.
  bool converts() const noexcept { return !scratch_.empty(); }
  void commit(std::int64_t begin, std::int64_t count) const {
    if (converts()) store_f32(tensor_, begin, count, data_ + begin);
  }

 private:
  HostTensor tensor_;
  std::vector<float> scratch_;
  float* data_ = nullptr;
};

}  // namespace porta::detail
