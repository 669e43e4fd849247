#pragma once
// Finds every OpenCL device on every platform the ICD loader knows, and describes each one.
#include <CL/cl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "porta/device.hpp"

namespace porta::detail {

struct ClDeviceDescription {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  DeviceInfo info;
  std::string identity;          // name, driver and platform: part of every program-cache key
  std::size_t alignment = 128;   // CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes
  std::uint64_t max_allocation = 0;
  std::size_t max_work_group = 1;
  std::uint64_t local_memory = 0;
  bool is_cpu = false;
};

struct ClDiscovery {
  std::vector<ClDeviceDescription> devices;  // in platform order, then device order
  std::string reason;                        // why `devices` is empty
};

// Never throws for a missing ICD or driver: that is a reason, not an error.
ClDiscovery discover_opencl_devices();

}  // namespace porta::detail
