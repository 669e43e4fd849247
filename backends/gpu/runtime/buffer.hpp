#pragma once
// Device memory: one gpuMalloc per buffer. Transfers are synchronous (on a stream of the buffer's
// own), so they are ordered before any run that follows.
#include <memory>

#include "backends/gpu/runtime/context.hpp"
#include "core/runtime/backend.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {

class GpuBuffer final : public DeviceBuffer {
 public:
  // Throws porta::Error(OutOfMemory) with the size asked and the memory free.
  GpuBuffer(std::shared_ptr<const DeviceContext> context, std::size_t bytes);
  ~GpuBuffer() override;
  GpuBuffer(const GpuBuffer&) = delete;
  GpuBuffer& operator=(const GpuBuffer&) = delete;

  std::size_t size() const override { return size_; }
  void write(std::size_t offset, std::span<const std::byte> bytes) override;
  void read(std::size_t offset, std::span<std::byte> bytes) const override;
  void fill(std::size_t offset, std::size_t bytes, std::byte value) override;
  std::byte* data() const noexcept { return data_; }

 private:
  std::shared_ptr<const DeviceContext> context_;
  Stream stream_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
