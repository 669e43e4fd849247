#include "backends/opencl/cl_device.hpp"

#include "backends/opencl/cl_error.hpp"

namespace porta::detail {

ClDevice::ClDevice(ClDeviceDescription d) : description(std::move(d)) {
  cl_int status = CL_SUCCESS;
  const cl_context_properties properties[] = {CL_CONTEXT_PLATFORM,
                                              reinterpret_cast<cl_context_properties>(description.platform), 0};
  context = ClContext(clCreateContext(properties, 1, &description.device, nullptr, nullptr, &status));
  check_cl(status, "clCreateContext");
  queue = ClQueue(clCreateCommandQueue(context.get(), description.device, CL_QUEUE_PROFILING_ENABLE, &status));
  check_cl(status, "clCreateCommandQueue");
}

cl_ulong profiling_ns(const ClEvent& event, cl_profiling_info what) {
  cl_ulong ns = 0;
  check_cl(clGetEventProfilingInfo(event.get(), what, sizeof ns, &ns, nullptr), "clGetEventProfilingInfo");
  return ns;
}

}  // namespace porta::detail
