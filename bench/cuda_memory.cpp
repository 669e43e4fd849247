// cuda:N's memory through the CUDA driver API, loaded at run time (libcuda.so.1); cuda.h gives the
// types. The device's primary context is the one the CUDA runtime and NCCL use too.
#include "cuda_memory.hpp"

#include <fmt/core.h>

#include "runtime_library.hpp"

namespace porta::bench {
namespace {

#define PORTA_CU(f) decltype(&::f) f = library.get<decltype(&::f)>(PORTA_BENCH_NAME_OF(f))

struct Driver {
  RuntimeLibrary library{"libcuda.so.1", "the CUDA driver (libcuda.so.1)"};
  PORTA_CU(cuInit);
  PORTA_CU(cuGetErrorString);
  PORTA_CU(cuDeviceGet);
  PORTA_CU(cuDevicePrimaryCtxRetain);
  PORTA_CU(cuCtxSetCurrent);
  PORTA_CU(cuCtxSynchronize);
  PORTA_CU(cuMemAlloc);
  PORTA_CU(cuMemFree);
  PORTA_CU(cuMemAllocHost);
  PORTA_CU(cuMemFreeHost);
  PORTA_CU(cuMemcpyHtoD);
  PORTA_CU(cuMemcpyDtoH);
};

#undef PORTA_CU

class CudaMemory final : public CudaDevice {
 public:
  explicit CudaMemory(int index) : index_(index) {
    check(driver_.cuInit(0), "cuInit");
    check(driver_.cuDeviceGet(&device_, index), "cuDeviceGet");
    check(driver_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    make_current();
  }
  std::string spec() const override { return fmt::format("cuda:{}", index_); }
  int index() const override { return index_; }
  void make_current() override { check(driver_.cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }
  void synchronize() override { check(driver_.cuCtxSynchronize(), "cuCtxSynchronize"); }

  void* allocate(std::size_t bytes) override {
    CUdeviceptr p = 0;
    check(driver_.cuMemAlloc(&p, bytes), "cuMemAlloc");
    return reinterpret_cast<void*>(p);
  }
  void release(void* buffer) override { driver_.cuMemFree(reinterpret_cast<CUdeviceptr>(buffer)); }
  void* allocate_pinned(std::size_t bytes) override {
    void* p = nullptr;
    check(driver_.cuMemAllocHost(&p, bytes), "cuMemAllocHost");
    return p;
  }
  void release_pinned(void* host) override { driver_.cuMemFreeHost(host); }
  void upload(void* buffer, const void* host, std::size_t bytes) override {
    check(driver_.cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(buffer), host, bytes), "cuMemcpyHtoD");
  }
  void download(void* host, const void* buffer, std::size_t bytes) override {
    check(driver_.cuMemcpyDtoH(host, reinterpret_cast<CUdeviceptr>(buffer), bytes), "cuMemcpyDtoH");
  }

 private:
  void check(CUresult status, const char* what) const {
    if (status == CUDA_SUCCESS) return;
    const char* text = nullptr;
    driver_.cuGetErrorString(status, &text);
    throw Error(ErrorCode::DeviceUnavailable, fmt::format("cuda:{}: {} failed: {}", index_, what, text ? text : "?"));
  }

  Driver driver_;
  int index_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

}  // namespace

std::unique_ptr<CudaDevice> open_cuda_memory(int index) { return std::make_unique<CudaMemory>(index); }

}  // namespace porta::bench
