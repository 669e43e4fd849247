#include "backends/opencl/device_discovery.hpp"

#include "backends/opencl/cl_error.hpp"
#include "core/runtime/host_backend.hpp"

// Vendor queries for the SIMD width (cl_nv_device_attribute_query, cl_amd_device_attribute_query).
#ifndef CL_DEVICE_WARP_SIZE_NV
#define CL_DEVICE_WARP_SIZE_NV 0x4003
#endif
#ifndef CL_DEVICE_WAVEFRONT_WIDTH_AMD
#define CL_DEVICE_WAVEFRONT_WIDTH_AMD 0x4043
#endif

namespace porta::detail {
namespace {

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  std::size_t size = 0;
  if (clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  if (clGetPlatformInfo(platform, what, size, text.data(), nullptr) != CL_SUCCESS) return {};
  text.resize(text.find('\0') == std::string::npos ? size : text.find('\0'));
  return text;
}

std::string device_string(cl_device_id device, cl_device_info what) {
  std::size_t size = 0;
  if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  if (clGetDeviceInfo(device, what, size, text.data(), nullptr) != CL_SUCCESS) return {};
  text.resize(text.find('\0') == std::string::npos ? size : text.find('\0'));
  return text;
}

// A scalar device property, or `fallback` when the device does not answer (e.g. a vendor query).
template <class T> T device_value(cl_device_id device, cl_device_info what, T fallback = T{}) {
  T value{};
  return clGetDeviceInfo(device, what, sizeof value, &value, nullptr) == CL_SUCCESS ? value : fallback;
}

bool has_extension(const std::string& extensions, const std::string& name) {
  return (" " + extensions + " ").find(" " + name + " ") != std::string::npos;
}

ClDeviceDescription describe(cl_platform_id platform, cl_device_id device, std::size_t index) {
  ClDeviceDescription d;
  d.platform = platform;
  d.device = device;
  const std::string platform_name = platform_string(platform, CL_PLATFORM_NAME);
  const std::string platform_version = platform_string(platform, CL_PLATFORM_VERSION);
  const std::string extensions = device_string(device, CL_DEVICE_EXTENSIONS);
  const std::string driver = device_string(device, CL_DRIVER_VERSION);
  const auto type = device_value<cl_device_type>(device, CL_DEVICE_TYPE);
  d.is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0;

  DeviceInfo& info = d.info;
  info.spec = "opencl:" + std::to_string(index);
  info.backend = "opencl";
  info.name = device_string(device, CL_DEVICE_NAME);
  info.vendor = device_string(device, CL_DEVICE_VENDOR);
  info.arch = device_string(device, CL_DEVICE_OPENCL_C_VERSION);
  info.driver = driver + " (" + platform_version + ")";
  info.compute_units = static_cast<int>(device_value<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS));
  info.threads = d.is_cpu ? info.compute_units : 0;
  // OpenCL 1.2 has no device-level SIMD width: the vendors' queries where they exist, else the
  // native float vector width (the SIMD lanes of a CPU device).
  int simd = static_cast<int>(device_value<cl_uint>(device, CL_DEVICE_WARP_SIZE_NV));
  if (simd == 0) simd = static_cast<int>(device_value<cl_uint>(device, CL_DEVICE_WAVEFRONT_WIDTH_AMD));
  if (simd == 0) simd = static_cast<int>(device_value<cl_uint>(device, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT));
  info.subgroup_size = std::max(simd, 1);
  info.memory_total = device_value<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE);
  // OpenCL cannot say how much is free; a CPU device's memory is the host's.
  info.memory_free = d.is_cpu ? std::min(info.memory_total, host_memory_available()) : info.memory_total;
  info.fp16 = has_extension(extensions, "cl_khr_fp16");

  d.identity = info.name + "|" + driver + "|" + platform_name + "|" + platform_version;
  d.alignment = std::max<std::size_t>(device_value<cl_uint>(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, 1024) / 8, 64);
  d.max_allocation = device_value<cl_ulong>(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  d.max_work_group = device_value<std::size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, 1);
  d.local_memory = device_value<cl_ulong>(device, CL_DEVICE_LOCAL_MEM_SIZE);
  return d;
}

}  // namespace

ClDiscovery discover_opencl_devices() {
  ClDiscovery result;
  cl_uint platform_count = 0;
  const cl_int status = clGetPlatformIDs(0, nullptr, &platform_count);
  if (status != CL_SUCCESS || platform_count == 0) {
    result.reason = "no OpenCL platform (clGetPlatformIDs: " +
                    std::string(status == CL_SUCCESS ? "0 platforms" : cl_error_name(status)) +
                    "); install an ICD such as pocl-opencl-icd or a GPU driver";
    return result;
  }
  std::vector<cl_platform_id> platforms(platform_count);
  if (clGetPlatformIDs(platform_count, platforms.data(), nullptr) != CL_SUCCESS) {
    result.reason = "clGetPlatformIDs failed while listing platforms";
    return result;
  }
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) continue;
    std::vector<cl_device_id> ids(count);
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id id : ids)
      if (device_value<cl_bool>(id, CL_DEVICE_AVAILABLE) && device_value<cl_bool>(id, CL_DEVICE_COMPILER_AVAILABLE))
        result.devices.push_back(describe(platform, id, result.devices.size()));
  }
  if (result.devices.empty())
    result.reason = std::to_string(platform_count) + " OpenCL platform(s) but no available device with a compiler";
  return result;
}

}  // namespace porta::detail
