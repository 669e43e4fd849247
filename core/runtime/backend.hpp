#pragma once
// The backend contract: what every backend (ref, cpu, opencl, cuda, hip) implements.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "porta/device.hpp"
#include "porta/error.hpp"
#include "porta/executable.hpp"
#include "porta/graph.hpp"
#include "core/runtime/tuning.hpp"

namespace porta::detail {

// "cpu:threads=2" -> {backend "cpu", index 0, options {threads: 2}}; "opencl:1" -> index 1.
struct DeviceSpec {
  std::string text;
  std::string backend;
  int index = 0;
  std::vector<std::pair<std::string, std::string>> options;

  const std::string* option(std::string_view key) const;
};

DeviceSpec parse_device_spec(std::string_view text);

// Throws Internal unless [offset, offset + bytes) lies inside a buffer of `size` bytes.
void check_buffer_range(std::size_t offset, std::size_t bytes, std::size_t size);

// One allocation in a device's memory.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual std::size_t size() const = 0;
  virtual void write(std::size_t offset, std::span<const std::byte> bytes) = 0;
  virtual void read(std::size_t offset, std::span<std::byte> bytes) const = 0;
  virtual void fill(std::size_t offset, std::size_t bytes, std::byte value) = 0;
};

// Where every tensor lives. Activations (inputs, intermediates, outputs) share one arena;
// constants are packed into a second buffer uploaded once.
struct MemoryPlan {
  std::vector<std::int64_t> offset;           // per tensor id: arena offset, -1 if not in the arena
  std::vector<std::int64_t> constant_offset;  // per tensor id: constant-buffer offset, or -1
  std::uint64_t arena_bytes = 0;
  std::uint64_t constant_bytes = 0;
  std::uint64_t naive_arena_bytes = 0;  // every activation in its own allocation, for comparison
};

// Where a variable's new value is computed: `value` is planned in the variable's own bytes, so that
// the node computing it updates the variable in place (core/compile/assignments.hpp).
struct VariableWrite {
  Tensor variable;
  Tensor value;
};

// A graph after the backend-agnostic passes, ready for a backend to prepare.
struct CompiledGraph {
  Graph graph;
  std::vector<std::int32_t> order;  // node indices in execution order, dead nodes removed
  std::vector<VariableWrite> writes;  // one per assignment of `graph`
  MemoryPlan plan;
  std::uint64_t hash = 0;
  CompileOptions options;
};

// What a run records, one slot per node of `order` where a span is not empty: device-timed
// durations (CompileOptions::profile) and the plans its kernels report (the first run; see
// core/runtime/plan_log.hpp). `report` flags the steps after which the run calls `completed(step)`,
// once that node's output is complete in the arena (RunOptions::output_ready); empty, none. A backend
// that cannot tell when one node has finished calls them all, in order, at the end of its run (CUDA, HIP).
struct NodeRecords {
  std::span<double> seconds;
  std::span<std::string> plans;
  std::span<const std::uint8_t> report = {};
  std::function<void(std::size_t step)> completed = {};
};

// A backend's prepared form of one CompiledGraph.
class Program {
 public:
  virtual ~Program() = default;
  // Runs every node of `order` and waits; returns the run's time as the backend measured it.
  virtual RunTime run(DeviceBuffer& arena, DeviceBuffer& constants, NodeRecords records) = 0;
};

class DeviceImpl {
 public:
  virtual ~DeviceImpl() = default;
  virtual const DeviceInfo& info() const = 0;
  virtual std::string unsupported_reason(const Graph& graph, const Node& node,
                                         const CompileOptions& options) const = 0;
  // The layout this device runs the Conv2d node `conv` fastest in. It need not support it: the
  // compiler's layout pass asks unsupported_reason too. The default keeps graphs as built.
  virtual Layout preferred_layout(const Graph& graph, const Node& conv, const CompileOptions& options) const {
    (void)graph, (void)conv, (void)options;
    return Layout::NCHW;
  }
  virtual std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes) = 0;
  virtual std::unique_ptr<Program> prepare(std::shared_ptr<const CompiledGraph> graph) = 0;
  virtual std::size_t alignment() const { return 256; }  // of every planned tensor offset
  // Device::measure_fma_gflops; a backend without the probe keeps this default.
  virtual double measure_fma_gflops() {
    throw Error(ErrorCode::Unsupported, "device '" + info().spec + "': the " + info().backend +
                                            " backend has no FMA probe");
  }
  // Device::measure_copy_gbs; likewise.
  virtual double measure_copy_gbs() {
    throw Error(ErrorCode::Unsupported, "device '" + info().spec + "': the " + info().backend +
                                            " backend has no device-to-device copy probe");
  }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual BackendStatus status() = 0;  // enumerates devices; never throws for a missing driver
  virtual std::shared_ptr<DeviceImpl> open(const DeviceSpec& spec) = 0;
  // porta-bench tune: measures kernel parameters on one device (core/runtime/tuning.hpp). The
  // default throws Unsupported: only backends with tunable kernels override it.
  virtual TuneReport tune(const DeviceSpec& spec, const TuneSettings& settings);
};

// Every backend compiled into this build: ref first, then cpu, then the optional ones.
std::span<const std::unique_ptr<Backend>> registry();
// The backend `spec` names; throws NotFound, listing the build's backends, when there is none.
Backend& find_backend(const DeviceSpec& spec);

}  // namespace porta::detail
