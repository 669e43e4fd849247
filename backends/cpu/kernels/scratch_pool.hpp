#pragma once
// Reusable, cache-line-aligned float buffers for packed GEMM panels. Allocating them per call
// would page-fault megabytes on every GEMM; thread-local buffers are unsafe because a TBB thread
// waiting in a nested parallel loop may run another GEMM's task. A lease holds a buffer that no
// one else uses until it is returned. Returned buffers are kept up to a total size, so that one
// huge layer does not pin its scratch for the life of the process.
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace porta::detail {

struct FreeFloats {
  void operator()(float* p) const noexcept;
};
using AlignedFloats = std::unique_ptr<float[], FreeFloats>;

// `floats` uninitialised floats, 64-byte aligned (the micro-kernels load B panels aligned);
// throws OutOfMemory.
AlignedFloats aligned_floats(std::size_t floats);

class ScratchPool {
  struct Buffer {
    AlignedFloats data;
    std::size_t floats = 0;
  };

 public:
  class Lease {
   public:
    Lease(ScratchPool& pool, Buffer buffer) : pool_(&pool), buffer_(std::move(buffer)) {}
    Lease(Lease&&) = delete;
    ~Lease() { pool_->give_back(std::move(buffer_)); }
    float* data() const noexcept { return buffer_.data.get(); }

   private:
    ScratchPool* pool_;
    Buffer buffer_;
  };

  // A buffer of at least `floats` floats, 64-byte aligned; throws OutOfMemory. For 0 floats, an
  // empty lease that does not touch the pool (or its lock).
  Lease acquire(std::size_t floats);

 private:
  void give_back(Buffer buffer);

  static constexpr std::size_t kept_limit = std::size_t{256} << 20;  // bytes

  std::mutex mutex_;
  std::vector<Buffer> free_;
  std::size_t kept_ = 0;  // bytes in free_
};

// The CPU backend's one pool of GEMM panels.
ScratchPool& gemm_scratch();

}  // namespace porta::detail
