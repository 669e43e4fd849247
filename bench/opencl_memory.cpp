// opencl:N's memory through the OpenCL ICD loader, loaded at run time (libOpenCL.so.1): a pinned
// host buffer is a CL_MEM_ALLOC_HOST_PTR buffer mapped for the host, as vendors advise for DMA.
#include <CL/cl.h>

#include <map>
#include <vector>

#include <fmt/core.h>

#include "device_memory.hpp"
#include "runtime_library.hpp"

namespace porta::bench {
namespace {

#define PORTA_CL(f) decltype(&::f) f = library.get<decltype(&::f)>(#f)

struct OpenCl {
  RuntimeLibrary library{"libOpenCL.so.1", "the OpenCL ICD loader (libOpenCL.so.1)"};
  PORTA_CL(clGetPlatformIDs);
  PORTA_CL(clGetDeviceIDs);
  PORTA_CL(clGetDeviceInfo);
  PORTA_CL(clCreateContext);
  PORTA_CL(clReleaseContext);
  PORTA_CL(clCreateCommandQueue);
  PORTA_CL(clReleaseCommandQueue);
  PORTA_CL(clCreateBuffer);
  PORTA_CL(clReleaseMemObject);
  PORTA_CL(clEnqueueWriteBuffer);
  PORTA_CL(clEnqueueReadBuffer);
  PORTA_CL(clEnqueueMapBuffer);
  PORTA_CL(clEnqueueUnmapMemObject);
  PORTA_CL(clFinish);
};

#undef PORTA_CL

class OpenClMemory final : public DeviceMemory {
 public:
  explicit OpenClMemory(int index) : index_(index) {
    device_ = find_device(index);
    cl_int status = CL_SUCCESS;
    context_ = cl_.clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &status);
    check(status, "clCreateContext");
    queue_ = cl_.clCreateCommandQueue(context_, device_, 0, &status);
    check(status, "clCreateCommandQueue");
  }
  ~OpenClMemory() override {
    cl_.clReleaseCommandQueue(queue_);
    cl_.clReleaseContext(context_);
  }
  std::string spec() const override { return fmt::format("opencl:{}", index_); }

  void* allocate(std::size_t bytes) override {
    cl_int status = CL_SUCCESS;
    cl_mem buffer = cl_.clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &status);
    check(status, "clCreateBuffer");
    return buffer;
  }
  void release(void* buffer) override { cl_.clReleaseMemObject(static_cast<cl_mem>(buffer)); }
  void* allocate_pinned(std::size_t bytes) override {
    cl_mem buffer = static_cast<cl_mem>(allocate_host_visible(bytes));
    cl_int status = CL_SUCCESS;
    void* host = cl_.clEnqueueMapBuffer(queue_, buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr,
                                        nullptr, &status);
    check(status, "clEnqueueMapBuffer");
    pinned_[host] = buffer;
    return host;
  }
  void release_pinned(void* host) override {
    const cl_mem buffer = pinned_.at(host);
    cl_.clEnqueueUnmapMemObject(queue_, buffer, host, 0, nullptr, nullptr);
    cl_.clFinish(queue_);
    cl_.clReleaseMemObject(buffer);
    pinned_.erase(host);
  }
  void upload(void* buffer, const void* host, std::size_t bytes) override {
    check(cl_.clEnqueueWriteBuffer(queue_, static_cast<cl_mem>(buffer), CL_TRUE, 0, bytes, host, 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
  }
  void download(void* host, const void* buffer, std::size_t bytes) override {
    check(cl_.clEnqueueReadBuffer(queue_, static_cast<cl_mem>(const_cast<void*>(buffer)), CL_TRUE, 0, bytes, host, 0,
                                  nullptr, nullptr),
          "clEnqueueReadBuffer");
  }

 private:
  void* allocate_host_visible(std::size_t bytes) {
    cl_int status = CL_SUCCESS;
    cl_mem buffer = cl_.clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &status);
    check(status, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)");
    return buffer;
  }

  // Counted as porta's opencl backend counts them: every platform in order, the devices that are
  // available and have a compiler.
  cl_device_id find_device(int index) const {
    cl_uint platform_count = 0;
    cl_.clGetPlatformIDs(0, nullptr, &platform_count);
    std::vector<cl_platform_id> platforms(platform_count);
    if (platform_count) cl_.clGetPlatformIDs(platform_count, platforms.data(), nullptr);
    int seen = 0;
    for (cl_platform_id platform : platforms) {
      cl_uint count = 0;
      if (cl_.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) continue;
      std::vector<cl_device_id> ids(count);
      cl_.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
      for (cl_device_id id : ids) {
        cl_bool available = CL_FALSE, compiler = CL_FALSE;
        cl_.clGetDeviceInfo(id, CL_DEVICE_AVAILABLE, sizeof available, &available, nullptr);
        cl_.clGetDeviceInfo(id, CL_DEVICE_COMPILER_AVAILABLE, sizeof compiler, &compiler, nullptr);
        if (available && compiler && seen++ == index) return id;
      }
    }
    throw Error(ErrorCode::NotFound, fmt::format("opencl:{}: no such OpenCL device ({} found)", index, seen));
  }

  void check(cl_int status, const char* what) const {
    if (status != CL_SUCCESS)
      throw Error(ErrorCode::DeviceUnavailable,
                  fmt::format("opencl:{}: {} failed with OpenCL error {}", index_, what, status));
  }

  OpenCl cl_;
  int index_;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::map<void*, cl_mem> pinned_;
};

}  // namespace

std::unique_ptr<DeviceMemory> open_opencl_memory(int index) { return std::make_unique<OpenClMemory>(index); }

}  // namespace porta::bench
