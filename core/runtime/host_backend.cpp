#include "core/runtime/host_backend.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <new>
#include <string>

#include "core/runtime/fault_injection.hpp"
#include "core/runtime/plan_log.hpp"
#include "porta/error.hpp"

namespace porta::detail {

namespace {
constexpr std::size_t host_alignment = 64;  // one cache line, and an AVX-512 register
}

HostBuffer::HostBuffer(std::size_t bytes) : size_(bytes) {
  // More than the machine has is refused here rather than left to overcommit or a sanitizer's
  // allocator, which may abort instead of returning null.
  const std::uint64_t total = host_memory_total();
  const bool too_large = (total != 0 && bytes > total) || bytes > SIZE_MAX - host_alignment;
  const std::size_t rounded = (bytes + host_alignment - 1) / host_alignment * host_alignment;
  auto* p = too_large || fault::should_fail(fault::Site::HostAllocation)
                ? nullptr
                : static_cast<std::byte*>(std::aligned_alloc(host_alignment, rounded));
  if (p == nullptr)
    throw Error(ErrorCode::OutOfMemory, "host allocation of " + std::to_string(bytes) + " bytes failed (" +
                                            std::to_string(host_memory_available()) + " bytes available)");
  data_.reset(p);
}

void HostBuffer::Free::operator()(std::byte* p) const noexcept { std::free(p); }

void HostBuffer::write(std::size_t offset, std::span<const std::byte> bytes) {
  check_buffer_range(offset, bytes.size(), size_);
  if (!bytes.empty()) std::memcpy(data_.get() + offset, bytes.data(), bytes.size());
}

void HostBuffer::read(std::size_t offset, std::span<std::byte> bytes) const {
  check_buffer_range(offset, bytes.size(), size_);
  if (!bytes.empty()) std::memcpy(bytes.data(), data_.get() + offset, bytes.size());
}

void HostBuffer::fill(std::size_t offset, std::size_t bytes, std::byte value) {
  check_buffer_range(offset, bytes, size_);
  std::memset(data_.get() + offset, static_cast<int>(value), bytes);
}

HostProgram::HostProgram(std::shared_ptr<const CompiledGraph> graph, const HostKernelTable& kernels, Executor execute,
                         const HostPrepareTable* prepare)
    : graph_(std::move(graph)), kernels_(kernels), execute_(std::move(execute)) {
  if (prepare == nullptr) return;
  // Inside the executor, like a run: what a preparer measures or spreads over threads sees the
  // device's own thread count.
  const auto prepare_all = [&] {
    for (const std::int32_t index : graph_->order) {
      const Node& node = graph_->graph.nodes()[static_cast<std::size_t>(index)];
      const HostPrepare fn = (*prepare)[static_cast<std::size_t>(node.op)];
      states_.push_back(fn ? fn(graph_->graph, node) : nullptr);
    }
  };
  in_executor(prepare_all);
}

void HostProgram::in_executor(const std::function<void()>& body) const {
  if (execute_)
    execute_(body);
  else
    body();
}

RunTime HostProgram::run(DeviceBuffer& arena, DeviceBuffer& constants, NodeRecords records) {
  std::byte* const arena_base = static_cast<HostBuffer&>(arena).data();
  std::byte* const constant_base = static_cast<HostBuffer&>(constants).data();
  const Graph& graph = graph_->graph;
  const MemoryPlan& plan = graph_->plan;
  const auto view = [&](Tensor t) {
    const auto id = static_cast<std::size_t>(t.id);
    std::byte* data = plan.constant_offset[id] >= 0 ? constant_base + plan.constant_offset[id] : arena_base + plan.offset[id];
    return HostTensor{&graph.tensors()[id].desc, data};
  };
  std::chrono::steady_clock::duration elapsed{};
  const auto body = [&] {
    // One clock reading per node, each the end of a node and the start of the next: a reading
    // costs tens of ns in a VM (with two a node, a 1x1x1 GEMM's run took 0.19 us, now 0.17; Zen 4).
    const auto run_start = std::chrono::steady_clock::now();
    auto node_start = run_start;
    for (std::size_t step = 0; step < graph_->order.size(); ++step) {
      const Node& node = graph.nodes()[static_cast<std::size_t>(graph_->order[step])];
      inputs_.clear();
      for (const Tensor t : node.inputs) inputs_.push_back(view(t));
      const HostNodeState* state = states_.empty() ? nullptr : states_[step].get();
      {
        const PlanScope scope(records.plans.empty() ? nullptr : &records.plans[step]);
        kernels_[static_cast<std::size_t>(node.op)](HostOpArgs{node, inputs_, view(node.output), state});
      }
      const auto node_end = std::chrono::steady_clock::now();
      if (!records.seconds.empty())
        records.seconds[step] = std::chrono::duration<double>(node_end - node_start).count();
      node_start = node_end;
      if (!records.report.empty() && records.report[step]) {
        records.completed(step);
        node_start = std::chrono::steady_clock::now();  // the caller's time is no node's
      }
    }
    elapsed = node_start - run_start;
  };
  in_executor(std::ref(body));  // a std::function of a reference allocates nothing
  return {std::chrono::duration<double>(elapsed).count(), RunClock::Host};
}

HostDevice::HostDevice(DeviceInfo info, const HostKernelTable& kernels, HostProgram::Executor execute,
                       HostVendorSource vendor, const HostPrepareTable* prepare, HostLayoutChoice layout)
    : info_(std::move(info)),
      kernels_(kernels),
      execute_(std::move(execute)),
      vendor_source_(vendor),
      prepare_(prepare),
      layout_(layout) {}

const HostVendorProvider* HostDevice::vendor() const {
  std::call_once(vendor_once_, [this] {
    try {
      vendor_ = vendor_source_ ? vendor_source_() : nullptr;
    } catch (const Error& e) {
      vendor_failure_ = "the " + info_.backend + " backend's vendor library provider: " + e.what();
      return;
    }
    if (vendor_ == nullptr) {
      vendor_failure_ = "the " + info_.backend + " backend has no vendor library provider in this build";
      return;
    }
    if (prepare_ == nullptr) return;
    for (std::size_t op = 0; op < op_kind_count; ++op)
      if (vendor_->kernels[op] == kernels_[op]) vendor_prepare_[op] = (*prepare_)[op];
  });
  return vendor_;
}

std::string HostDevice::unsupported_reason(const Graph& graph, const Node& node, const CompileOptions& options) const {
  const bool use_vendor = options.impl == Impl::Vendor;
  if (use_vendor && vendor() == nullptr) return vendor_failure_;
  const HostKernelTable& kernels = use_vendor ? vendor_->kernels : kernels_;
  if (kernels[static_cast<std::size_t>(node.op)] == nullptr)
    return "the " + info_.backend + " backend has no " + std::string(to_string(node.op)) + " kernel";
  return use_vendor ? vendor_->unsupported_reason(graph, node) : std::string{};
}

Layout HostDevice::preferred_layout(const Graph& graph, const Node& conv, const CompileOptions& options) const {
  if (options.impl == Impl::Vendor && vendor() != nullptr) return vendor_->conv_layout;
  return layout_ ? layout_(graph, conv) : Layout::NCHW;
}

std::unique_ptr<DeviceBuffer> HostDevice::allocate(std::size_t bytes) { return std::make_unique<HostBuffer>(bytes); }

std::unique_ptr<Program> HostDevice::prepare(std::shared_ptr<const CompiledGraph> graph) {
  const bool use_vendor = graph->options.impl == Impl::Vendor && vendor() != nullptr;
  return std::make_unique<HostProgram>(std::move(graph), use_vendor ? vendor_->kernels : kernels_, execute_,
                                       use_vendor ? &vendor_prepare_ : prepare_);
}

namespace {
std::uint64_t meminfo_bytes(std::string_view key) {
  std::ifstream meminfo("/proc/meminfo");
  std::string name;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> name >> kib >> unit)
    if (name.substr(0, name.size() - 1) == key) return kib * 1024;
  return 0;
}
}  // namespace

std::uint64_t host_memory_total() { return meminfo_bytes("MemTotal"); }
std::uint64_t host_memory_available() { return meminfo_bytes("MemAvailable"); }

}  // namespace porta::detail
