#pragma once
// One opened OpenCL device: its context and in-order queue, shared by buffers and programs.
#include "backends/opencl/cl_handles.hpp"
#include "backends/opencl/device_discovery.hpp"

namespace porta::detail {

struct ClDevice {
  ClDeviceDescription description;
  ClContext context;
  ClQueue queue;  // in order, with profiling enabled so any run can be timed

  explicit ClDevice(ClDeviceDescription d);  // throws porta::Error naming the failing call
  cl_device_id id() const noexcept { return description.device; }
  const DeviceInfo& info() const noexcept { return description.info; }
};

// A profiled command's time stamp `what` (CL_PROFILING_COMMAND_START, _END), in nanoseconds.
cl_ulong profiling_ns(const ClEvent& event, cl_profiling_info what);

}  // namespace porta::detail
