// The CPU device: porta's kernels on oneTBB, in a task arena with the thread count of the spec
// ("cpu:threads=N"; default: every hardware thread).
#include <algorithm>
#include <charconv>
#include <chrono>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include "backends/cpu/kernels/cache_sizes.hpp"
#include "backends/cpu/kernels/micro_kernel.hpp"
#include "backends/cpu/kernels/vector_kernels.hpp"
#include "backends/cpu/ops/ops.hpp"
#include "core/runtime/plan_log.hpp"
#if defined(PORTA_HAVE_ONEDNN) && !defined(PORTA_BACKEND_MODULES)
#include "backends/cpu/vendor/onednn.hpp"
#endif
#include "core/runtime/fma_probe.hpp"
#include "core/runtime/host_backend.hpp"
#include "core/runtime/module_loader.hpp"
#include "porta/error.hpp"

namespace porta::detail {
namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

// Instruction sets as a device names them, and their float lanes: a CPU's "subgroup".
struct IsaName {
  std::string_view isa, label;
  int floats;
};
constexpr IsaName isa_names[] = {{"avx512", "AVX-512", 16}, {"avx2", "AVX2", 8}, {"generic", "baseline", 4}};

const IsaName& isa_name(std::string_view isa) {
  for (const IsaName& name : isa_names)
    if (name.isa == isa) return name;
  return isa_names[2];
}

// The widest set this CPU has, whether or not this build compiled its kernels.
std::string_view cpu_isa() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
#endif
  return "generic";
}

// The CPU's set ("x86-64 AVX-512"), and the kernels' where PORTA_CPU_ISA or the build
// (PORTA_CPU_KERNELS) leaves it unused ("x86-64 AVX-512, AVX2 kernels"), so that a result file
// tells which code ran. The lanes are the kernels'.
void describe_isa(DeviceInfo& info) {
  const IsaName& cpu = isa_name(cpu_isa());
  const IsaName* kernels = &cpu;
  try {
    kernels = &isa_name(gemm_micro_kernel().isa);
  } catch (const Error&) {
    // A malformed PORTA_CPU_ISA: listing the device still works; opening it reports the error.
  }
#if defined(__x86_64__)
  info.arch = cpu.isa == "generic" ? "x86-64" : "x86-64 " + std::string(cpu.label);
  if (kernels != &cpu) info.arch += ", " + std::string(kernels->label) + " kernels";
#else
  info.arch = "host";
#endif
  info.subgroup_size = kernels->floats;
}

int hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

DeviceInfo cpu_info(int threads, bool default_threads) {
  DeviceInfo info;
  info.spec = default_threads ? "cpu" : "cpu:threads=" + std::to_string(threads);
  info.backend = "cpu";
  info.name = cpu_model_name();
  info.vendor = "host";
  describe_isa(info);
  info.compute_units = hardware_threads();
  info.threads = threads;
  info.memory_total = host_memory_total();
  info.memory_free = host_memory_available();
  try {
    const CacheSizes& caches = host_cache_sizes();
    info.cache_l1 = static_cast<std::uint64_t>(caches.l1);
    info.cache_l2 = static_cast<std::uint64_t>(caches.l2);
    info.cache_l3 = static_cast<std::uint64_t>(caches.l3);
  } catch (const Error&) {
    // A malformed PORTA_CPU_CACHES: listing the device still works; opening it reports the error.
  }
  return info;
}

int parse_threads(const DeviceSpec& spec) {
  const std::string* value = spec.option("threads");
  for (const auto& [key, _] : spec.options)
    if (key != "threads")
      throw Error(ErrorCode::InvalidArgument, "device '" + spec.text + "': unknown cpu option '" + key + "' (known: threads)");
  if (value == nullptr) return hardware_threads();
  int threads = 0;
  const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), threads);
  if (ec != std::errc{} || end != value->data() + value->size() || threads < 1 || threads > 4096)
    throw Error(ErrorCode::InvalidArgument, "device '" + spec.text + "': threads=" + *value + " must be an integer in [1, 4096]");
  return threads;
}

// Channels-last: a conv's reduction runs along contiguous channels, every filter tap is one
// shift of the same rows, and depthwise filters vectorise across channels. On ResNet-50 and
// EfficientNet-B0 this ran 1.1-1.6x faster than NCHW end to end (`git show 693fa6f:docs/benchmarks.md`).
Layout cpu_conv_layout(const Graph&, const Node&) { return Layout::NHWC; }

// oneDNN's provider: linked in, or in a module build the cpu-onednn module, loaded on the first
// impl=vendor use (HostVendorSource).
const HostVendorProvider* vendor_provider() {
#if defined(PORTA_HAVE_ONEDNN) && defined(PORTA_BACKEND_MODULES)
  return static_cast<const HostVendorProvider*>(vendor_module("cpu-onednn"));
#elif defined(PORTA_HAVE_ONEDNN)
  return &onednn_provider();
#else
  return nullptr;
#endif
}

// The host device with porta's kernels in a task arena of the spec's threads.
class CpuDevice final : public HostDevice {
 public:
  CpuDevice(DeviceInfo info, std::shared_ptr<tbb::task_arena> arena)
      : HostDevice(std::move(info), cpu_kernels(), [arena](const std::function<void()>& body) { arena->execute(body); },
                   vendor_provider, &cpu_preparers(), cpu_conv_layout),
        arena_(std::move(arena)) {}

  // Each thread of the arena runs the chosen kernels' multiply-add chains, all at once, timed by
  // the wall clock around them all.
  double measure_fma_gflops() override {
    const VectorKernels& kernels = vector_kernels();
    const int threads = info().threads;
    std::vector<float> sums(static_cast<std::size_t>(threads));
    const auto chains = [&](int t, std::int64_t steps) {
      sums[static_cast<std::size_t>(t)] = kernels.multiply_add_chains(steps, fma_scale, fma_shift);
    };
    const auto run = [&](std::int64_t steps) {
      const auto start = std::chrono::steady_clock::now();
      arena_->execute([&] {
        tbb::parallel_for(0, threads, [&](int t) { chains(t, steps); }, tbb::static_partitioner{});
      });
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    const auto read_sums = [&](std::span<float> out) { std::ranges::copy(sums, out.begin()); };
    return measure_fma_probe(
        {.run = run, .read_sums = read_sums, .chains = kernels.multiply_adds_per_step, .threads = threads},
        info().spec);
  }

 private:
  std::shared_ptr<tbb::task_arena> arena_;
};

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  BackendStatus status() override { return {"cpu", {cpu_info(hardware_threads(), true)}, {}}; }
  std::shared_ptr<DeviceImpl> open(const DeviceSpec& spec) override {
    if (spec.index != 0)
      throw Error(ErrorCode::NotFound, "device '" + spec.text + "': there is one cpu device, cpu:0; use cpu:threads=N to size it");
    const int threads = parse_threads(spec);
    // A malformed PORTA_CPU_CACHES, PORTA_CPU_ISA or PORTA_VERBOSE fails here, not in the middle of a run.
    host_cache_sizes();
    gemm_micro_kernel();
    plans_verbose();
    return std::make_shared<CpuDevice>(cpu_info(threads, spec.option("threads") == nullptr),
                                       std::make_shared<tbb::task_arena>(threads));
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace porta::detail
