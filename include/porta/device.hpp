#pragma once
// Devices: enumeration, selection by a spec string, and compilation of graphs.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "porta/graph.hpp"

namespace porta {

class Executable;
namespace detail {
class DeviceImpl;
}

struct DeviceInfo {
  std::string spec;     // the string that opens this device again, e.g. "cpu:threads=2", "cuda:0"
  std::string backend;  // "ref", "cpu", "opencl", "cuda", "hip"
  std::string name;
  std::string vendor;
  std::string arch;
  std::string driver;
  int compute_units = 0;  // cores, SMs, CUs
  int threads = 0;        // host threads a CPU device runs on
  int subgroup_size = 1;  // warp / wavefront / SIMD width; a run-time value, never assumed
  std::uint64_t memory_total = 0;
  std::uint64_t memory_free = 0;
  bool fp16 = false;      // native f16 arithmetic
  bool bf16 = false;      // native bf16 arithmetic
  bool matrix_units = false;
  bool tf32 = false;      // allow_tf32 runs f32 GEMM/conv on tf32 matrix units here (not merely: the chip has them)
  // Data cache per core that a CPU device's blocking assumes, in bytes (PORTA_CPU_CACHES, else
  // what the system reports); 0 where unknown or not a CPU device.
  std::uint64_t cache_l1 = 0, cache_l2 = 0, cache_l3 = 0;
};

// What a compiled-in backend found at run time.
struct BackendStatus {
  std::string name;
  std::vector<DeviceInfo> devices;
  std::string reason;  // why `devices` is empty, e.g. "no driver"
};

std::vector<BackendStatus> backends();  // every backend compiled into this build, in a fixed order
std::vector<DeviceInfo> devices();      // every usable device, reference device excluded

enum class Impl : std::uint8_t { Native, Vendor };
std::string_view to_string(Impl impl) noexcept;

struct CompileOptions {
  Impl impl = Impl::Native;
  bool allow_tf32 = false;     // let f32 GEMM/conv use tf32 matrix units where they exist
  bool poison_memory = false;  // fill the arena with NaN before each run (tests: unwritten outputs fail)
  bool profile = false;        // record per-node device times on each run
  // Fold batchnorms into convs, fuse residual adds and activations into conv/gemm epilogues
  // where the device runs them, and let elementwise ops write over an input that dies there.
  bool optimize = true;
  // With optimize: the layout convolutions run in. Unset lets the device choose per conv (the
  // pass then moves chains of convs and the ops between them to that layout and converts at the
  // chain's ends); NCHW keeps the layouts the graph was built with; NHWC moves every conv the
  // device can run in NHWC.
  std::optional<Layout> layout = std::nullopt;
};

// What a compiled graph would need on a device, known before anything is allocated.
struct MemoryEstimate {
  std::uint64_t arena_bytes = 0;        // activations, planned
  std::uint64_t constant_bytes = 0;     // weights after folding
  std::uint64_t naive_arena_bytes = 0;  // activations if each had its own allocation
  std::uint64_t peak_bytes() const { return arena_bytes + constant_bytes; }
};

class Device {
 public:
  // Specs: "ref", "cpu", "cpu:threads=1", "opencl:0", "cuda:0", "hip:0".
  // Throws NotFound for an unknown backend or index and DeviceUnavailable when it has no device.
  static Device open(std::string_view spec);

  const DeviceInfo& info() const;

  // Why `node` of `graph` cannot run here, or an empty string when it can.
  std::string unsupported_reason(const Graph& graph, const Node& node,
                                 const CompileOptions& options = {}) const;
  // The layout this device runs a Conv2d node fastest in: what the layout pass moves convs to
  // when CompileOptions::layout is unset.
  Layout preferred_layout(const Graph& graph, const Node& conv, const CompileOptions& options = {}) const;

  // The rate of f32 multiply-adds this device reaches on registers alone, in GFLOP/s (two flops
  // each), on every thread or compute unit it has: the arithmetic ceiling of its own kernels,
  // which compute f16 and bf16 in f32 too. Matrix units are not counted, so a GEMM on them can beat
  // it. The fastest of a few runs of about 20 ms. Throws Unsupported where the backend has no probe.
  double measure_fma_gflops() const;

  // The rate of the device's own copy between two of its buffers (cudaMemcpyAsync device to device
  // on a GPU), in GB/s counting bytes read and written, as BabelStream's copy does: the bandwidth
  // ceiling of elementwise kernels. The fastest of a few copies of 256 MiB. Throws Unsupported where
  // the backend has no such copy.
  double measure_copy_gbs() const;

  // Validates, orders, plans memory and prepares kernels. Throws Unsupported listing every node
  // this device cannot run; it never falls back to another device.
  Executable compile(const Graph& graph, const CompileOptions& options = {}) const;

  // The memory `compile` would plan for `graph`, without preparing kernels or allocating.
  MemoryEstimate estimate_memory(const Graph& graph, const CompileOptions& options = {}) const;

 private:
  explicit Device(std::shared_ptr<detail::DeviceImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::DeviceImpl> impl_;
};

}  // namespace porta
