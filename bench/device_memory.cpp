#include "device_memory.hpp"

#include <charconv>

#include <fmt/core.h>

#include "porta/error.hpp"

#ifndef PORTA_BENCH_CUDA
#define PORTA_BENCH_CUDA 0
#endif
#ifndef PORTA_BENCH_OPENCL
#define PORTA_BENCH_OPENCL 0
#endif
#if PORTA_BENCH_CUDA
#include "cuda_memory.hpp"
#endif

namespace porta::bench {

#if PORTA_BENCH_OPENCL
std::unique_ptr<DeviceMemory> open_opencl_memory(int index);  // opencl_memory.cpp
#endif

std::unique_ptr<DeviceMemory> open_device_memory(const std::string& spec) {
  const std::size_t colon = spec.find(':');
  const std::string backend = spec.substr(0, colon);
  int index = 0;
  if (colon != std::string::npos) {
    const char* first = spec.data() + colon + 1;
    const auto [end, ec] = std::from_chars(first, spec.data() + spec.size(), index);
    if (ec != std::errc{} || end != spec.data() + spec.size() || index < 0)
      throw Error(ErrorCode::InvalidArgument,
                  fmt::format("'{}' is not a device spec such as cuda:0 or opencl:1", spec));
  }
  [[maybe_unused]] const auto missing = [&](const char* headers) {
    return Error(ErrorCode::Unsupported, fmt::format("{}: this porta-bench was built without {}", spec, headers));
  };
  if (backend == "cuda") {
#if PORTA_BENCH_CUDA
    return open_cuda_memory(index);
#else
    throw missing("cuda.h");
#endif
  }
  if (backend == "opencl") {
#if PORTA_BENCH_OPENCL
    return open_opencl_memory(index);
#else
    throw missing("CL/cl.h");
#endif
  }
  throw Error(ErrorCode::Unsupported,
              fmt::format("{}: host-device copies are measured on cuda and opencl devices only", spec));
}

}  // namespace porta::bench
