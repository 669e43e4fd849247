#include "backends/gpu/runtime/buffer.hpp"

#include <string>

#include "backends/gpu/runtime/check.hpp"
#include "core/runtime/fault_injection.hpp"
#include "porta/error.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {

GpuBuffer::GpuBuffer(std::shared_ptr<const DeviceContext> context, std::size_t bytes)
    : context_(std::move(context)), stream_(*context_), size_(bytes) {
  void* p = nullptr;
  const gpuError_t error =
      fault::should_fail(fault::Site::DeviceAllocation) ? gpuErrorMemoryAllocation : gpuMalloc(&p, bytes);
  if (error == gpuErrorMemoryAllocation) {
    (void)gpuGetLastError();  // clear it, so that the next launch check does not report it
    std::size_t free = 0, total = 0;
    (void)gpuMemGetInfo(&free, &total);
    throw Error(ErrorCode::OutOfMemory, context_->spec() + ": allocating " + std::to_string(bytes) + " bytes failed (" +
                                            std::to_string(free) + " of " + std::to_string(total) +
                                            " bytes free); use a smaller batch or model");
  }
  check(error, context_->spec(), "allocating " + std::to_string(bytes) + " bytes");
  data_ = static_cast<std::byte*>(p);
}

GpuBuffer::~GpuBuffer() {
  (void)gpuSetDevice(context_->ordinal());
  (void)gpuFree(data_);  // gpuFree waits for the device to finish with the memory
}

void GpuBuffer::write(std::size_t offset, std::span<const std::byte> bytes) {
  check_buffer_range(offset, bytes.size(), size_);
  if (bytes.empty()) return;
  context_->make_current();
  check(gpuMemcpyAsync(data_ + offset, bytes.data(), bytes.size(), gpuMemcpyHostToDevice, stream_.get()),
        context_->spec(), "copying to the device");
  stream_.synchronize(*context_, "copying to the device");  // the caller may free `bytes` on return
}

void GpuBuffer::read(std::size_t offset, std::span<std::byte> bytes) const {
  check_buffer_range(offset, bytes.size(), size_);
  if (bytes.empty()) return;
  context_->make_current();
  check(gpuMemcpyAsync(bytes.data(), data_ + offset, bytes.size(), gpuMemcpyDeviceToHost, stream_.get()),
        context_->spec(), "copying from the device");
  stream_.synchronize(*context_, "copying from the device");
}

void GpuBuffer::fill(std::size_t offset, std::size_t bytes, std::byte value) {
  check_buffer_range(offset, bytes, size_);
  if (bytes == 0) return;
  context_->make_current();
  check(gpuMemsetAsync(data_ + offset, static_cast<int>(value), bytes, stream_.get()), context_->spec(),
        "filling device memory");
  stream_.synchronize(*context_, "filling device memory");
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
