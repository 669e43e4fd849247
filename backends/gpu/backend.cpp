// The GPU backend ("cuda" or "hip", by build): device enumeration and description from the
// runtime's device properties, buffers and programs. With no driver or no device it has zero
// devices and says why; nothing here aborts.
#include <algorithm>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "backends/gpu/ops/ops.hpp"
#include "backends/gpu/plan/op_args.hpp"
#include "backends/gpu/runtime/buffer.hpp"
#include "backends/gpu/runtime/check.hpp"
#include "backends/gpu/runtime/program.hpp"
#include "backends/gpu/runtime/vendor.hpp"
#include "core/runtime/fma_probe.hpp"
#include "core/runtime/module_loader.hpp"
#include "core/runtime/op_math.hpp"
#include "porta/error.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

constexpr std::string_view backend_name = PORTA_GPU_BACKEND_NAME;

// Why the runtime reports no device, in the words of `porta-bench devices`.
std::string no_device_reason(gpuError_t error) {
  if (error == gpuErrorInsufficientDriver) return "no driver: " + error_text(error);
  if (error == gpuErrorNoDevice) return "no device: " + error_text(error);
  return "the runtime failed: " + error_text(error);
}

struct Enumeration {
  int count = 0;
  std::string reason;  // set when count is 0
};

Enumeration enumerate() {
  Enumeration e;
  const gpuError_t error = gpuGetDeviceCount(&e.count);
  if (error != gpuSuccess) {
    (void)gpuGetLastError();
    e.count = 0;
    e.reason = no_device_reason(error);
  } else if (e.count == 0) {
    e.reason = "no device";
  }
  return e;
}

std::string spec_of(int ordinal) { return std::string(backend_name) + ":" + std::to_string(ordinal); }

gpuDeviceProp_t properties(int ordinal) {
  gpuDeviceProp_t prop{};
  check(gpuGetDeviceProperties(&prop, ordinal), spec_of(ordinal), "reading device properties");
  return prop;
}

gpu::DeviceLimits limits_of(const gpuDeviceProp_t& prop) {
  gpu::DeviceLimits limits;
  const gpu::Capabilities caps = gpu_capabilities(prop);
  limits.matrix_units = gpu_runs_mma(caps);
  limits.tf32 = gpu_runs_tf32(caps);
  limits.compute_units = prop.multiProcessorCount;
  limits.warp_size = prop.warpSize;
  limits.max_threads_per_block = prop.maxThreadsPerBlock;
  limits.shared_per_block = static_cast<std::int64_t>(prop.sharedMemPerBlock);
  for (int i = 0; i < 3; ++i) limits.max_grid[i] = prop.maxGridSize[i];
  return limits;
}

DeviceInfo device_info(int ordinal) {
  const gpuDeviceProp_t prop = properties(ordinal);
  const gpu::Capabilities caps = gpu_capabilities(prop);
  int driver = 0, runtime = 0;
  (void)gpuDriverGetVersion(&driver);
  (void)gpuRuntimeGetVersion(&runtime);
  DeviceInfo info;
  info.spec = spec_of(ordinal);
  info.backend = backend_name;
  info.name = prop.name;
  info.vendor = PORTA_GPU_VENDOR_NAME;
  info.arch = caps.arch;
  info.driver = "driver " + std::to_string(driver) + ", runtime " + std::to_string(runtime);
  info.compute_units = prop.multiProcessorCount;
  info.subgroup_size = prop.warpSize;
  info.memory_total = prop.totalGlobalMem;
  std::size_t free = 0, total = 0;
  if (gpuSetDevice(ordinal) == gpuSuccess && gpuMemGetInfo(&free, &total) == gpuSuccess) info.memory_free = free;
  info.fp16 = caps.fp16;
  info.bf16 = caps.bf16;
  info.matrix_units = caps.matrix_units;
  info.tf32 = gpu_runs_tf32(caps);  // what allow_tf32 can use here, never merely what the chip has
  return info;
}

// "graphs=on|off" (default on): record the whole graph once and replay it.
bool parse_graphs_option(const DeviceSpec& spec) {
  bool graphs = true;
  for (const auto& [key, value] : spec.options) {
    if (key != "graphs")
      throw Error(ErrorCode::InvalidArgument, "device '" + spec.text + "': unknown " + std::string(backend_name) +
                                                  " option '" + key + "' (known: graphs=on|off)");
    if (value != "on" && value != "off")
      throw Error(ErrorCode::InvalidArgument, "device '" + spec.text + "': graphs=" + value + " must be on or off");
    graphs = value == "on";
  }
  return graphs;
}

// The vendor provider of this build, or nullptr when it was built without one; in a module build,
// throws DeviceUnavailable when the vendor module cannot load.
std::shared_ptr<const VendorProvider> vendor_provider([[maybe_unused]] std::shared_ptr<const DeviceContext> context) {
#if defined(PORTA_GPU_VENDOR) && defined(PORTA_BACKEND_MODULES)
  const void* glue = vendor_module(std::string(backend_name) + "-vendor");
  return static_cast<const VendorFactory*>(glue)->make(std::move(context));
#elif defined(PORTA_GPU_VENDOR)
  return make_vendor_provider(std::move(context));
#else
  return nullptr;
#endif
}

class GpuDevice final : public DeviceImpl {
 public:
  GpuDevice(int ordinal, bool graphs)
      : info_(device_info(ordinal)),
        context_(std::make_shared<const DeviceContext>(ordinal, info_.spec, limits_of(properties(ordinal)))),
        graphs_(graphs) {}

  const DeviceInfo& info() const override { return info_; }

  std::string unsupported_reason(const Graph& graph, const Node& node, const CompileOptions& options) const override {
    // Every float op has a native kernel, in NCHW.
    if (std::string reason = nchw_only_reason(node, backend_name); !reason.empty()) return reason;
    if (std::string reason = float_only_reason(graph, node, backend_name); !reason.empty()) return reason;
    if (node.op == OpKind::Attention)
      if (std::string reason = gpu::attention_unsupported_reason(graph, node); !reason.empty()) return reason;
    if (options.impl != Impl::Vendor)
      return node.op == OpKind::Conv2d ? gpu::conv_index_limit(gpu::conv_args(graph, node)) : std::string{};
    if (vendor() == nullptr) return vendor_failure_;
    return vendor_->unsupported_reason(graph, node, options);
  }

  std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes) override {
    return std::make_unique<GpuBuffer>(context_, bytes);
  }

  std::unique_ptr<Program> prepare(std::shared_ptr<const CompiledGraph> graph) override {
    const VendorProvider* vendor = graph->options.impl == Impl::Vendor ? this->vendor() : nullptr;
    return std::make_unique<GpuProgram>(context_, std::move(graph), graphs_, vendor);
  }

  // ops/fma_probe.cu on 8 blocks of 256 threads per multiprocessor, enough warps to keep each
  // scheduler issuing; timed by events on a stream of its own.
  double measure_fma_gflops() override {
    context_->make_current();
    const gpu::DeviceLimits& limits = context_->limits();
    gpu::FmaProbeArgs args{.scale = fma_scale, .shift = fma_shift};
    args.threads = static_cast<unsigned>(std::min(256, limits.max_threads_per_block));
    args.blocks = static_cast<unsigned>(std::clamp<std::int64_t>(8 * limits.compute_units, 1, limits.max_grid[0]));
    GpuBuffer sums(context_, std::size_t{args.blocks} * args.threads * sizeof(float));
    args.sums = reinterpret_cast<float*>(sums.data());
    const Stream stream(*context_);
    const Event start = make_event(*context_), end = make_event(*context_);
    const auto run = [&](std::int64_t steps) {
      args.steps = steps;
      check(gpuEventRecord(start.get(), stream.get()), info_.spec, "recording an event");
      launch_fma_probe(args, stream.get());
      check(gpuGetLastError(), info_.spec, "launching the FMA probe");
      check(gpuEventRecord(end.get(), stream.get()), info_.spec, "recording an event");
      stream.synchronize(*context_, "running the FMA probe");
      float ms = 0.0f;
      check(gpuEventElapsedTime(&ms, start.get(), end.get()), info_.spec, "reading the FMA probe's time");
      return ms * 1e-3;
    };
    const auto read_sums = [&](std::span<float> out) { sums.read(0, std::as_writable_bytes(out)); };
    return measure_fma_probe({.run = run, .read_sums = read_sums, .chains = gpu::fma_probe_chains,
                              .threads = std::int64_t{args.blocks} * args.threads},
                             info_.spec);
  }

  // The runtime's own device-to-device copy, the fastest of a few, timed by events: the ceiling
  // that porta's elementwise kernels are judged against, measured without them.
  double measure_copy_gbs() override {
    context_->make_current();
    constexpr std::size_t bytes = std::size_t{256} << 20;
    GpuBuffer from(context_, bytes), to(context_, bytes);
    const Stream stream(*context_);
    const Event start = make_event(*context_), end = make_event(*context_);
    double best_s = 0.0;
    for (int copy = 0; copy < 6; ++copy) {  // the first warms up
      check(gpuEventRecord(start.get(), stream.get()), info_.spec, "recording an event");
      check(gpuMemcpyAsync(to.data(), from.data(), bytes, gpuMemcpyDeviceToDevice, stream.get()), info_.spec,
            "copying between device buffers");
      check(gpuEventRecord(end.get(), stream.get()), info_.spec, "recording an event");
      stream.synchronize(*context_, "running the copy probe");
      float ms = 0.0f;
      check(gpuEventElapsedTime(&ms, start.get(), end.get()), info_.spec, "reading the copy probe's time");
      if (copy > 0 && (best_s == 0.0 || ms * 1e-3 < best_s)) best_s = ms * 1e-3;
    }
    if (best_s <= 0.0) throw Error(ErrorCode::Internal, info_.spec + ": the copy probe's events read no time");
    return 2.0 * static_cast<double>(bytes) / best_s * 1e-9;
  }

 private:
  // The provider, made on the first impl=vendor use; null, with vendor_failure_ saying why, when
  // there is none.
  const VendorProvider* vendor() const {
    std::call_once(vendor_once_, [this] {
      try {
        vendor_ = vendor_provider(context_);
      } catch (const Error& e) {
        vendor_failure_ = "the " + std::string(backend_name) + " backend's vendor library provider: " + e.what();
        return;
      }
      if (vendor_ == nullptr)
        vendor_failure_ = "this build of porta has no " + std::string(backend_name) + " vendor provider (" +
                          PORTA_GPU_VENDOR_LIBRARIES + " not found when it was built; use impl=native)";
    });
    return vendor_.get();
  }

  DeviceInfo info_;
  std::shared_ptr<const DeviceContext> context_;
  bool graphs_;
  mutable std::once_flag vendor_once_;
  mutable std::shared_ptr<const VendorProvider> vendor_;
  mutable std::string vendor_failure_;
};

class GpuBackend final : public Backend {
 public:
  std::string_view name() const override { return backend_name; }

  BackendStatus status() override {
    BackendStatus status{std::string(backend_name), {}, {}};
    const Enumeration e = enumerate();
    status.reason = e.reason;
    for (int i = 0; i < e.count; ++i) status.devices.push_back(device_info(i));
    return status;
  }

  std::shared_ptr<DeviceImpl> open(const DeviceSpec& spec) override {
    const bool graphs = parse_graphs_option(spec);
    const Enumeration e = enumerate();
    if (e.count == 0)
      throw Error(ErrorCode::DeviceUnavailable, "device '" + spec.text + "': " + std::string(backend_name) + ": " + e.reason);
    if (spec.index >= e.count)
      throw Error(ErrorCode::NotFound, "device '" + spec.text + "': there are " + std::to_string(e.count) + " " +
                                           std::string(backend_name) + " devices (" + spec_of(0) + " to " +
                                           spec_of(e.count - 1) + ")");
    return std::make_shared<GpuDevice>(spec.index, graphs);
  }
};

}  // namespace

std::unique_ptr<Backend> make_backend() { return std::make_unique<GpuBackend>(); }

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
