#pragma once
// A device's memory as porta-bench comm uses it: buffers, pinned host buffers and the runtime's own
// copies between them and the host, through the vendor runtime loaded at run time (dlopen), so
// porta-bench needs no GPU library to start. For host-device copy bandwidth, and for NCCL's
// device buffers (nccl.hpp).
#include <cstddef>
#include <memory>
#include <string>

namespace porta::bench {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual std::string spec() const = 0;
  // A device buffer, as the runtime's handle (a CUdeviceptr, a cl_mem), and a page-locked host
  // buffer, which the runtime copies by DMA; each freed by its release.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* buffer) = 0;
  virtual void* allocate_pinned(std::size_t bytes) = 0;
  virtual void release_pinned(void* host) = 0;
  // Blocking copies between host memory (pinned or not) and a device buffer.
  virtual void upload(void* buffer, const void* host, std::size_t bytes) = 0;
  virtual void download(void* host, const void* buffer, std::size_t bytes) = 0;
};

// For "cuda:N" (the driver API, libcuda.so.1) and "opencl:N" (libOpenCL.so.1, N counted as porta's
// opencl backend counts devices). Throws porta::Error Unsupported for other backends, and where
// the runtime or device is absent or this build has no headers for it, with the reason.
std::unique_ptr<DeviceMemory> open_device_memory(const std::string& spec);

// A RAII device buffer of `memory`.
class DeviceAllocation {
 public:
  DeviceAllocation(DeviceMemory& memory, std::size_t bytes) : memory_(memory), handle_(memory.allocate(bytes)) {}
  ~DeviceAllocation() { memory_.release(handle_); }
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;
  void* get() const { return handle_; }

 private:
  DeviceMemory& memory_;
  void* handle_;
};

}  // namespace porta::bench
