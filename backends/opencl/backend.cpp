// The OpenCL backend. Devices are numbered across every platform the ICD loader finds, in order:
// "opencl:<index>", or "opencl:name=<text>" for the first device whose name contains <text>
// (case-insensitive), e.g. "opencl:name=pthread" for PoCL's CPU device.
#include <algorithm>
#include <bit>
#include <cctype>
#include <span>
#include <vector>

#include "backends/opencl/backend.hpp"

#include "backends/opencl/buffer.hpp"
#include "backends/opencl/cl_error.hpp"
#include "backends/opencl/graph_program.hpp"
#include "backends/opencl/vendor/provider.hpp"
#include "core/runtime/fma_probe.hpp"
#include "core/runtime/module_loader.hpp"
#include "core/runtime/op_math.hpp"
#include "porta/error.hpp"

namespace porta::detail {

const ClVendorProvider* opencl_vendor_provider() {
#if defined(PORTA_HAVE_CLBLAST) && defined(PORTA_BACKEND_MODULES)
  return static_cast<const ClVendorProvider*>(vendor_module("opencl-clblast"));
#elif defined(PORTA_HAVE_CLBLAST)
  return &clblast_provider();
#else
  return nullptr;
#endif
}

namespace {

class OpenClDevice final : public DeviceImpl {
 public:
  OpenClDevice(ClDeviceDescription description, std::optional<GemmTiles> tiles)
      : device_(std::make_shared<ClDevice>(std::move(description))),
        programs_(*device_, default_program_cache_dir(), std::move(tiles)) {}

  const DeviceInfo& info() const override { return device_->info(); }

  // porta's kernels run every op in every storage dtype it takes: f16 is loaded and stored with
  // vload_half/vstore_half, which OpenCL 1.2 has without cl_khr_fp16, and all arithmetic is f32.
  std::string unsupported_reason(const Graph& graph, const Node& node, const CompileOptions& options) const override {
    if (std::string reason = nchw_only_reason(node, "opencl"); !reason.empty()) return reason;
    if (options.impl != Impl::Vendor) return {};
    try {
      if (const ClVendorProvider* vendor = opencl_vendor_provider()) return vendor->unsupported_reason(graph, node);
    } catch (const Error& e) {
      return std::string("the opencl backend's vendor library provider: ") + e.what();
    }
    return "the opencl backend has no vendor library provider in this build (install libclblast-dev for CLBlast)";
  }

  std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes) override { return std::make_unique<ClBuffer>(device_, bytes); }

  std::unique_ptr<Program> prepare(std::shared_ptr<const CompiledGraph> graph) override {
    return std::make_unique<ClGraphProgram>(device_, std::move(graph), programs_);
  }

  std::size_t alignment() const override { return device_->description.alignment; }

  // kernels/fma_probe.cl on 1024 work items per compute unit, enough to fill a GPU's schedulers;
  // timed by profiling events. A CPU device's work items run vectors of its SIMD width, as many as
  // the cpu backend's probe (fma_probe_vectors).
  double measure_fma_gflops() override {
    const auto simd = static_cast<unsigned>(std::clamp(info().subgroup_size, 1, 16));  // an OpenCL vector width:
    const int width = device_->description.is_cpu ? static_cast<int>(std::bit_floor(simd)) : 1;  // 1, 2, 4, 8, 16
    const int chains = fma_probe_vectors(width);
    const std::size_t items = 1024 * static_cast<std::size_t>(std::max(1, info().compute_units));
    ClBuffer sums(device_, items * sizeof(float));
    const ClProgram program = programs_.cache().get(
        KernelPrograms::source("fma_probe"),
        programs_.options("fma_probe", DType::f32) + " -DFMA_WIDTH=" + std::to_string(width) +
            " -DFMA_CHAINS=" + std::to_string(chains));
    cl_int status = CL_SUCCESS;
    const ClKernel kernel(clCreateKernel(program.get(), "multiply_add_chains", &status));
    check_cl(status, "clCreateKernel");
    const cl_mem sums_mem = sums.mem();
    const float scale = fma_scale, shift = fma_shift;
    check_cl(clSetKernelArg(kernel.get(), 0, sizeof sums_mem, &sums_mem), "clSetKernelArg");
    check_cl(clSetKernelArg(kernel.get(), 2, sizeof scale, &scale), "clSetKernelArg");
    check_cl(clSetKernelArg(kernel.get(), 3, sizeof shift, &shift), "clSetKernelArg");
    const auto run = [&](std::int64_t steps) {
      const cl_long steps_arg = steps;
      check_cl(clSetKernelArg(kernel.get(), 1, sizeof steps_arg, &steps_arg), "clSetKernelArg");
      cl_event event = nullptr;
      check_cl(
          clEnqueueNDRangeKernel(device_->queue.get(), kernel.get(), 1, nullptr, &items, nullptr, 0, nullptr, &event),
          "clEnqueueNDRangeKernel");
      const ClEvent done(event);
      check_cl(clFinish(device_->queue.get()), "clFinish");
      return static_cast<double>(profiling_ns(done, CL_PROFILING_COMMAND_END) -
                                 profiling_ns(done, CL_PROFILING_COMMAND_START)) * 1e-9;
    };
    const auto read_sums = [&](std::span<float> out) { sums.read(0, std::as_writable_bytes(out)); };
    return measure_fma_probe({.run = run, .read_sums = read_sums, .chains = chains * width,
                              .threads = static_cast<std::int64_t>(items)},
                             info().spec);
  }

 private:
  std::shared_ptr<ClDevice> device_;
  KernelPrograms programs_;
};

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

class OpenClBackend final : public Backend {
 public:
  std::string_view name() const override { return "opencl"; }

  BackendStatus status() override {
    ClDiscovery found = discover_opencl_devices();
    BackendStatus status{"opencl", {}, found.reason};
    for (auto& d : found.devices) status.devices.push_back(std::move(d.info));
    return status;
  }

  std::shared_ptr<DeviceImpl> open(const DeviceSpec& spec) override { return make_opencl_device(find_opencl_device(spec)); }
  TuneReport tune(const DeviceSpec& spec, const TuneSettings& settings) override {
    return tune_opencl_gemm(spec, settings);
  }
};

}  // namespace

ClDeviceDescription find_opencl_device(const DeviceSpec& spec) {
  for (const auto& [key, _] : spec.options)
    if (key != "name")
      throw Error(ErrorCode::InvalidArgument, "device '" + spec.text + "': unknown opencl option '" + key + "' (known: name)");
  ClDiscovery found = discover_opencl_devices();
  if (found.devices.empty()) throw Error(ErrorCode::DeviceUnavailable, "device '" + spec.text + "': " + found.reason);
  std::string listing;
  for (const auto& d : found.devices) listing += (listing.empty() ? "" : ", ") + d.info.spec + " '" + d.info.name + "'";
  if (const std::string* name = spec.option("name")) {
    if (spec.index != 0)
      throw Error(ErrorCode::InvalidArgument, "device '" + spec.text + "': give an index or a name, not both");
    for (auto& d : found.devices)
      if (lower(d.info.name).find(lower(*name)) != std::string::npos) return std::move(d);
    throw Error(ErrorCode::NotFound, "device '" + spec.text + "': no OpenCL device name contains '" + *name +
                                         "' (devices: " + listing + ")");
  }
  if (static_cast<std::size_t>(spec.index) >= found.devices.size())
    throw Error(ErrorCode::NotFound, "device '" + spec.text + "': there are " + std::to_string(found.devices.size()) +
                                         " OpenCL device(s): " + listing);
  return std::move(found.devices[static_cast<std::size_t>(spec.index)]);
}

std::shared_ptr<DeviceImpl> make_opencl_device(ClDeviceDescription description, std::optional<GemmTiles> tiles) {
  return std::make_shared<OpenClDevice>(std::move(description), std::move(tiles));
}

std::unique_ptr<Backend> make_opencl_backend() { return std::make_unique<OpenClBackend>(); }

}  // namespace porta::detail
