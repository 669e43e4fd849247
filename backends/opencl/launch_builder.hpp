#pragma once
// What a prepared graph enqueues: kernels with their arguments bound at prepare time (only the
// buffers are bound per run) and buffer copies. The ops (ops/*.cpp) describe their launches
// through a LaunchBuilder.
#include <array>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "backends/opencl/kernel_programs.hpp"
#include "core/runtime/backend.hpp"

namespace porta::detail {

struct KernelLaunch {
  ClKernel kernel;
  std::vector<std::pair<cl_uint, std::int32_t>> buffers;  // argument index -> tensor id
  cl_uint dims = 1;
  std::array<std::size_t, 3> global{1, 1, 1};
  std::array<std::size_t, 3> local{1, 1, 1};
};

struct CopyLaunch {
  std::int32_t source = -1, destination = -1;  // tensor ids
  std::size_t bytes = 0;
};

// Where a tensor is at run time: its buffer and byte offset.
struct ClTensorRef {
  cl_mem mem = nullptr;
  std::size_t offset = 0;
};
using LocateTensor = std::function<ClTensorRef(Tensor)>;

// A vendor library call (CLBlast) that enqueues its own commands on the queue. `event` is null,
// or receives the event of its last command (per-node timing).
struct LibraryLaunch {
  std::function<void(cl_command_queue queue, const LocateTensor& locate, cl_event* event)> enqueue;
};

struct Launch {
  std::size_t step = 0;  // index into CompiledGraph::order, for per-node timing
  std::variant<KernelLaunch, CopyLaunch, LibraryLaunch> work;
};

using Long8 = std::array<std::int64_t, 8>;

// Arguments of one kernel, in its parameter order. A tensor is two parameters (see TENSOR in
// kernels/common.cl): its buffer, bound per run, and its byte offset, bound now.
class KernelArgs {
 public:
  KernelArgs(ClKernel kernel, const MemoryPlan& plan, std::string_view name);
  KernelArgs& tensor(Tensor t);
  KernelArgs& i64(std::int64_t value);
  KernelArgs& i32(std::int32_t value);
  KernelArgs& f32(float value);
  KernelArgs& long8(const Long8& value);
  KernelLaunch finish() &&;

 private:
  void set(std::size_t size, const void* value);
  KernelLaunch launch_;
  const MemoryPlan& plan_;
  std::string_view name_;
  cl_uint next_ = 0;
};

class LaunchBuilder {
 public:
  LaunchBuilder(KernelPrograms& programs, const CompiledGraph& graph) : programs_(programs), graph_(graph) {}

  const Graph& graph() const noexcept { return graph_.graph; }
  const TensorDesc& desc(Tensor t) const { return graph_.graph.desc(t); }
  const GemmTiles& gemm_tiles() const noexcept { return programs_.gemm_tiles(); }
  void set_step(std::size_t step) noexcept { step_ = step; }

  KernelArgs kernel(std::string_view stem, std::string_view name, DType storage);
  // One work-item per element, in work-groups of a fixed size (fewer kernel variants to compile).
  void enqueue_1d(KernelArgs args, std::int64_t items);
  void enqueue(KernelArgs args, cl_uint dims, std::array<std::size_t, 3> global, std::array<std::size_t, 3> local);
  void copy(Tensor source, Tensor destination);  // same bytes, e.g. a reshape
  void library(LibraryLaunch call) { launches_.push_back({step_, std::move(call)}); }
  // Reads the i64/i32 tensor `t` back (a blocking read, in queue order) and passes each element to
  // `check`, which throws for one out of range: a kernel cannot raise an error, so gather's indices
  // and the cross-entropy ops' class labels are checked so before the kernel that trusts them.
  void check_indices(Tensor t, std::function<void(std::int64_t)> check);
  // Whether no earlier step has claimed the host check of `t` (then this one has): a tensor does not
  // change within a run, so its first reader in the order checks it for every later one.
  bool claim_host_check(Tensor t) { return host_checked_.insert(t.id).second; }
  // What the current node runs, in PORTA_VERBOSE's words (core/runtime/plan_log.hpp): its
  // Executable::node_plans entry, and a verbose line now.
  void note_plan(std::string_view problem, std::string plan);

  std::vector<Launch> take() { return std::move(launches_); }
  std::vector<std::string> take_plans() { return std::move(plans_); }  // one per step of the order

 private:
  KernelPrograms& programs_;
  const CompiledGraph& graph_;
  std::vector<Launch> launches_;
  std::vector<std::string> plans_ = std::vector<std::string>(graph_.order.size());
  std::size_t step_ = 0;
  std::set<std::int32_t> host_checked_;
};

// Pads a shape (or strides) to 8 dimensions with leading `fill` values, as the kernels expect.
Long8 to_long8(const Shape& dims, std::int64_t fill);

}  // namespace porta::detail
