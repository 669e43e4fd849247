#include "backends/cpu/kernels/scratch_pool.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/runtime/fault_injection.hpp"
#include "porta/error.hpp"

namespace porta::detail {

void FreeFloats::operator()(float* p) const noexcept { std::free(p); }

AlignedFloats aligned_floats(std::size_t floats) {
  constexpr std::size_t line = 64;
  if (floats > (SIZE_MAX - line) / sizeof(float))
    throw Error(ErrorCode::OutOfMemory, "CPU buffer of " + std::to_string(floats) + " floats");
  const std::size_t bytes = (floats * sizeof(float) + line - 1) / line * line;
  void* p = fault::should_fail(fault::Site::HostAllocation) ? nullptr : std::aligned_alloc(line, bytes);
  if (p == nullptr) throw Error(ErrorCode::OutOfMemory, "CPU buffer of " + std::to_string(bytes) + " bytes");
  return AlignedFloats(static_cast<float*>(p));
}

ScratchPool::Lease ScratchPool::acquire(std::size_t floats) {
  if (floats == 0) return {*this, Buffer{}};
  {
    const std::lock_guard lock(mutex_);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->floats < floats) continue;
      Buffer found = std::move(*it);
      free_.erase(it);
      kept_ -= found.floats * sizeof(float);
      return {*this, std::move(found)};
    }
  }
  return {*this, Buffer{.data = aligned_floats(floats), .floats = floats}};
}

void ScratchPool::give_back(Buffer buffer) {
  const std::size_t bytes = buffer.floats * sizeof(float);
  if (!buffer.data) return;
  const std::lock_guard lock(mutex_);
  if (kept_ + bytes > kept_limit) return;  // freed as `buffer` goes out of scope
  kept_ += bytes;
  free_.push_back(std::move(buffer));
}

ScratchPool& gemm_scratch() {
  static ScratchPool pool;
  return pool;
}

}  // namespace porta::detail
