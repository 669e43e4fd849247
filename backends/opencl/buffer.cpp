#include "backends/opencl/buffer.hpp"

#include "backends/opencl/cl_error.hpp"
#include "core/runtime/fault_injection.hpp"

namespace porta::detail {

ClBuffer::ClBuffer(std::shared_ptr<const ClDevice> device, std::size_t bytes)
    : device_(std::move(device)), size_(bytes) {
  const auto& d = device_->description;
  const auto out_of_memory = [&](const std::string& why) {
    return Error(ErrorCode::OutOfMemory, "OpenCL device '" + d.info.name + "': cannot allocate " + std::to_string(bytes) +
                                             " bytes (" + why + "; device memory " + std::to_string(d.info.memory_total) +
                                             " bytes, largest allocation " + std::to_string(d.max_allocation) + " bytes)");
  };
  if (bytes > d.max_allocation) throw out_of_memory("larger than CL_DEVICE_MAX_MEM_ALLOC_SIZE");
  cl_int status = CL_MEM_OBJECT_ALLOCATION_FAILURE;
  if (!fault::should_fail(fault::Site::DeviceAllocation))
    mem_ = ClMem(clCreateBuffer(device_->context.get(), CL_MEM_READ_WRITE, bytes, nullptr, &status));
  if (status != CL_SUCCESS) throw out_of_memory("clCreateBuffer: " + std::string(cl_error_name(status)));
}

void ClBuffer::write(std::size_t offset, std::span<const std::byte> bytes) {
  check_buffer_range(offset, bytes.size(), size_);
  if (bytes.empty()) return;
  check_cl(clEnqueueWriteBuffer(device_->queue.get(), mem_.get(), CL_TRUE, offset, bytes.size(), bytes.data(), 0,
                                nullptr, nullptr),
           "clEnqueueWriteBuffer");
}

void ClBuffer::read(std::size_t offset, std::span<std::byte> bytes) const {
  check_buffer_range(offset, bytes.size(), size_);
  if (bytes.empty()) return;
  check_cl(clEnqueueReadBuffer(device_->queue.get(), mem_.get(), CL_TRUE, offset, bytes.size(), bytes.data(), 0,
                               nullptr, nullptr),
           "clEnqueueReadBuffer");
}

void ClBuffer::fill(std::size_t offset, std::size_t bytes, std::byte value) {
  check_buffer_range(offset, bytes, size_);
  if (bytes == 0) return;
  check_cl(clEnqueueFillBuffer(device_->queue.get(), mem_.get(), &value, 1, offset, bytes, 0, nullptr, nullptr),
           "clEnqueueFillBuffer");
  // The run that follows is enqueued on the same in-order queue, so no wait is needed here.
}

}  // namespace porta::detail
