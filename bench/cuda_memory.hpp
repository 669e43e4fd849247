#pragma once
// cuda:N's memory (device_memory.hpp) through the CUDA driver API, loaded at run time; only
// compiled where CMake found cuda.h (PORTA_BENCH_CUDA).
#include <cuda.h>

#include <memory>

#include "device_memory.hpp"

namespace porta::bench {

class CudaDevice : public DeviceMemory {
 public:
  virtual int index() const = 0;
  virtual void make_current() = 0;  // the device's primary context, on this thread
  virtual void synchronize() = 0;   // every stream's work done
};

std::unique_ptr<CudaDevice> open_cuda_memory(int index);

}  // namespace porta::bench
