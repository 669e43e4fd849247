#pragma once
// RAII owners of OpenCL handles: each releases its object exactly once; copies retain it.
#include <CL/cl.h>

#include <utility>

namespace porta::detail {

template <class Handle, cl_int (*retain)(Handle), cl_int (*release)(Handle)>
class ClHandle {
 public:
  ClHandle() = default;
  explicit ClHandle(Handle h) noexcept : h_(h) {}  // takes ownership of one reference
  ClHandle(const ClHandle& other) noexcept : h_(other.h_) {
    if (h_ != nullptr) retain(h_);
  }
  ClHandle(ClHandle&& other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
  ClHandle& operator=(ClHandle other) noexcept {
    std::swap(h_, other.h_);
    return *this;
  }
  ~ClHandle() {
    if (h_ != nullptr) release(h_);
  }
  Handle get() const noexcept { return h_; }
  explicit operator bool() const noexcept { return h_ != nullptr; }

 private:
  Handle h_ = nullptr;
};

using ClContext = ClHandle<cl_context, clRetainContext, clReleaseContext>;
using ClQueue = ClHandle<cl_command_queue, clRetainCommandQueue, clReleaseCommandQueue>;
using ClMem = ClHandle<cl_mem, clRetainMemObject, clReleaseMemObject>;
using ClProgram = ClHandle<cl_program, clRetainProgram, clReleaseProgram>;
using ClKernel = ClHandle<cl_kernel, clRetainKernel, clReleaseKernel>;
using ClEvent = ClHandle<cl_event, clRetainEvent, clReleaseEvent>;

}  // namespace porta::detail
