#pragma once
// A DeviceBuffer in OpenCL device memory; transfers are blocking on the device's queue.
#include <memory>

#include "backends/opencl/cl_device.hpp"
#include "core/runtime/backend.hpp"

namespace porta::detail {

class ClBuffer final : public DeviceBuffer {
 public:
  ClBuffer(std::shared_ptr<const ClDevice> device, std::size_t bytes);  // throws OutOfMemory
  std::size_t size() const override { return size_; }
  void write(std::size_t offset, std::span<const std::byte> bytes) override;
  void read(std::size_t offset, std::span<std::byte> bytes) const override;
  void fill(std::size_t offset, std::size_t bytes, std::byte value) override;
  cl_mem mem() const noexcept { return mem_.get(); }

 private:
  std::shared_ptr<const ClDevice> device_;
  ClMem mem_;
  std::size_t size_ = 0;
};

}  // namespace porta::detail
