#pragma once
// Shared machinery of the backends whose memory is host memory (ref and cpu): buffers, a program
// that walks the graph calling one kernel per node, and the kernel signature they implement.
#include <array>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/runtime/backend.hpp"

namespace porta::detail {

// A dense tensor in host memory.
struct HostTensor {
  const TensorDesc* desc = nullptr;
  std::byte* data = nullptr;

  DType dtype() const noexcept { return desc->dtype; }
  const Shape& shape() const noexcept { return desc->shape; }
  std::int64_t numel() const noexcept { return desc->numel(); }
  float load(std::size_t i) const noexcept { return load_as_f32(data, i, desc->dtype); }
  void store(std::size_t i, float v) const noexcept { store_from_f32(data, i, desc->dtype, v); }
};

// What a backend works out once per node when it prepares a graph (constant weights repacked
// into the layout its kernel reads, say), handed to the node's kernel on every run.
struct HostNodeState {
  virtual ~HostNodeState() = default;
};

struct HostOpArgs {
  const Node& node;
  std::span<const HostTensor> inputs;  // in the order of node.inputs
  HostTensor output;
  const HostNodeState* state = nullptr;  // what the backend prepared for this node, if anything
};

using HostKernel = void (*)(const HostOpArgs& args);
using HostKernelTable = std::array<HostKernel, op_kind_count>;  // nullptr: unsupported
// Runs once per node when a graph is prepared; constants' values are in the graph. May return null.
using HostPrepare = std::shared_ptr<const HostNodeState> (*)(const Graph& graph, const Node& node);
using HostPrepareTable = std::array<HostPrepare, op_kind_count>;  // nullptr: nothing to prepare

class HostBuffer final : public DeviceBuffer {
 public:
  explicit HostBuffer(std::size_t bytes);  // throws OutOfMemory
  std::size_t size() const override { return size_; }
  void write(std::size_t offset, std::span<const std::byte> bytes) override;
  void read(std::size_t offset, std::span<std::byte> bytes) const override;
  void fill(std::size_t offset, std::size_t bytes, std::byte value) override;
  std::byte* data() const noexcept { return data_.get(); }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte[], Free> data_;
  std::size_t size_ = 0;
};

// Runs a CompiledGraph node by node with a kernel table. `execute` wraps the preparation and
// every whole run, e.g. to enter the CPU device's task arena.
class HostProgram final : public Program {
 public:
  using Executor = std::function<void(const std::function<void()>&)>;
  HostProgram(std::shared_ptr<const CompiledGraph> graph, const HostKernelTable& kernels,
              Executor execute, const HostPrepareTable* prepare = nullptr);
  // Its time is host-measured (RunClock::Host): steady_clock around the kernels, inside the executor.
  RunTime run(DeviceBuffer& arena, DeviceBuffer& constants, NodeRecords records) override;

 private:
  void in_executor(const std::function<void()>& body) const;  // inside `execute_`, if there is one

  std::shared_ptr<const CompiledGraph> graph_;
  const HostKernelTable& kernels_;
  Executor execute_;
  std::vector<std::shared_ptr<const HostNodeState>> states_;  // per step of the order
  std::vector<HostTensor> inputs_;  // a node's, kept between runs so that a run allocates nothing
};

// The kernels a host device runs for CompileOptions::impl == Vendor: a vendor library's where it
// has them, the device's own for every other op.
struct HostVendorProvider {
  std::string_view library;  // e.g. "oneDNN"
  HostKernelTable kernels;
  // Why the library cannot run `node` (e.g. a dtype it lacks on this CPU), or empty.
  std::string (*unsupported_reason)(const Graph& graph, const Node& node);
  Layout conv_layout = Layout::NCHW;  // the layout its convolutions prefer
};

// Where a host device's vendor provider comes from, asked on the first impl=vendor use only: it
// returns the provider, null when the build has none, or throws DeviceUnavailable saying why the
// provider's module cannot load (core/runtime/module_loader.hpp).
using HostVendorSource = const HostVendorProvider* (*)();

// The layout a host device's own kernels prefer for a Conv2d node.
using HostLayoutChoice = Layout (*)(const Graph& graph, const Node& conv);

// A host device: everything but the kernel tables and the device description is shared.
class HostDevice : public DeviceImpl {
 public:
  // `prepare` runs for the nodes that the device's own kernels run, vendor provider or not.
  HostDevice(DeviceInfo info, const HostKernelTable& kernels, HostProgram::Executor execute = {},
             HostVendorSource vendor = nullptr, const HostPrepareTable* prepare = nullptr,
             HostLayoutChoice layout = nullptr);
  const DeviceInfo& info() const override { return info_; }
  std::string unsupported_reason(const Graph& graph, const Node& node,
                                 const CompileOptions& options) const override;
  Layout preferred_layout(const Graph& graph, const Node& conv, const CompileOptions& options) const override;
  std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes) override;
  std::unique_ptr<Program> prepare(std::shared_ptr<const CompiledGraph> graph) override;
  std::size_t alignment() const override { return 64; }

 private:
  // The provider, found on first use; null, with vendor_failure_ saying why, when there is none.
  const HostVendorProvider* vendor() const;

  DeviceInfo info_;
  const HostKernelTable& kernels_;
  HostProgram::Executor execute_;
  HostVendorSource vendor_source_;
  const HostPrepareTable* prepare_;
  HostLayoutChoice layout_;
  mutable std::once_flag vendor_once_;
  mutable const HostVendorProvider* vendor_ = nullptr;
  mutable std::string vendor_failure_;
  mutable HostPrepareTable vendor_prepare_{};  // prepare_ where the vendor provider runs the device's kernel
};

// Physical memory of this machine, total and available, in bytes.
std::uint64_t host_memory_total();
std::uint64_t host_memory_available();

}  // namespace porta::detail
