// porta.h: device listing and opening, the probes, and compiling a graph for a device.
#include <algorithm>

#include "core/c_api/handles.hpp"

using namespace porta::c_api;

namespace {

// Copies as much of `s` as fits, always NUL-terminated.
template <std::size_t N>
void copy_text(char (&to)[N], const std::string& s) {
  const std::size_t n = std::min(s.size(), N - 1);
  std::memcpy(to, s.data(), n);
  to[n] = '\0';
}

porta_device_info to_c(const porta::DeviceInfo& d) {
  porta_device_info out{};
  out.size = sizeof(porta_device_info);
  copy_text(out.spec, d.spec);
  copy_text(out.backend, d.backend);
  copy_text(out.name, d.name);
  copy_text(out.vendor, d.vendor);
  copy_text(out.arch, d.arch);
  copy_text(out.driver, d.driver);
  out.compute_units = d.compute_units;
  out.threads = d.threads;
  out.subgroup_size = d.subgroup_size;
  out.memory_total = d.memory_total;
  out.memory_free = d.memory_free;
  out.fp16 = d.fp16;
  out.bf16 = d.bf16;
  out.matrix_units = d.matrix_units;
  out.tf32 = d.tf32;
  return out;
}

// Writes `info` where the caller's struct says it has room for it.
void write_info(porta_device_info& to, const porta::DeviceInfo& info, const char* what) {
  if (to.size != 0 && to.size != sizeof(porta_device_info))
    invalid(std::string(what) + ".size is " + std::to_string(to.size) + ", expected " +
            std::to_string(sizeof(porta_device_info)) + " or 0");
  to = to_c(info);
}

porta::CompileOptions compile_options(const porta_compile_options* options) {
  const porta_compile_options o = params_or(options, porta_compile_options_default(), "porta_compile_options");
  return {.impl = enum_of(o.impl, porta::Impl::Vendor, "impl"), .allow_tf32 = o.allow_tf32 != 0,
          .poison_memory = o.poison_memory != 0, .profile = o.profile != 0, .optimize = o.optimize != 0};
}

}  // namespace

extern "C" {

porta_status porta_devices(porta_device_info* infos, size_t capacity, size_t* count) {
  return guard([&] {
    if (infos == nullptr && capacity > 0) invalid("infos is NULL with capacity " + std::to_string(capacity));
    size_t& found = out_ref(count, "count");
    const std::vector<porta::DeviceInfo> devices = porta::devices();
    for (std::size_t i = 0; i < devices.size() && i < capacity; ++i) write_info(infos[i], devices[i], "infos[i]");
    found = devices.size();
  });
}

porta_status porta_device_open(const char* spec, porta_device** out) {
  return guard([&] {
    porta_device*& result = out_ref(out, "out");
    result = new porta_device{.device = porta::Device::open(text(spec, "spec"))};
  });
}

void porta_device_free(porta_device* device) { free_handle(device); }

porta_status porta_device_info_get(const porta_device* device, porta_device_info* out) {
  return guard([&] { write_info(out_ref(out, "out"), get(device, "device").info(), "out"); });
}

porta_status porta_device_measure_fma_gflops(const porta_device* device, double* gflops) {
  return guard([&] {
    double& result = out_ref(gflops, "gflops");
    result = get(device, "device").measure_fma_gflops();
  });
}

porta_status porta_device_measure_copy_gbs(const porta_device* device, double* gbs) {
  return guard([&] {
    double& result = out_ref(gbs, "gbs");
    result = get(device, "device").measure_copy_gbs();
  });
}

porta_compile_options porta_compile_options_default(void) {
  return {.size = sizeof(porta_compile_options), .optimize = 1, .allow_tf32 = 0, .impl = PORTA_IMPL_NATIVE,
          .profile = 0, .poison_memory = 0};
}

porta_status porta_compile(const porta_device* device, const porta_graph* graph, const porta_compile_options* options,
                           porta_executable** out) {
  return guard([&] {
    porta_executable*& result = out_ref(out, "out");
    const porta::Device& d = get(device, "device");
    result = new porta_executable{.exe = d.compile(get(graph, "graph"), compile_options(options))};
  });
}

porta_status porta_estimate_memory(const porta_device* device, const porta_graph* graph,
                                   const porta_compile_options* options, porta_memory_estimate* out) {
  return guard([&] {
    porta_memory_estimate& result = out_ref(out, "out");
    const porta::Device& d = get(device, "device");
    const porta::MemoryEstimate m = d.estimate_memory(get(graph, "graph"), compile_options(options));
    result = {m.arena_bytes, m.constant_bytes, m.naive_arena_bytes};
  });
}

}  // extern "C"

static_assert(PORTA_IMPL_VENDOR == static_cast<int>(porta::Impl::Vendor));
