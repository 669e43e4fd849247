#pragma once
// What a program runs per node: a launch that binds the run's device addresses and enqueues on the
// program's stream.
#include <functional>
#include <string>
#include <vector>

#include "backends/gpu/plan/kernel_args.hpp"
#include "backends/gpu/runtime/context.hpp"
#include "core/runtime/backend.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {

class VendorSession;

// Device addresses of the tensors of one run, and of the error records of its index readers (one
// per node, in PlannedLaunches::index_readers' order).
struct Bindings {
  const CompiledGraph* graph = nullptr;
  std::byte* arena = nullptr;
  std::byte* constants = nullptr;
  gpu::IndexError* index_errors = nullptr;
  std::byte* operator()(Tensor t) const;
};

using NodeLaunch = std::function<void(const Bindings&, gpuStream_t)>;

// One launch per node of `graph.order`, with the kernel arguments planned once, here: the vendor
// library's where `vendor` (impl=vendor) runs the node, porta's kernel otherwise. `plans` says what
// porta's GEMM and conv kernels chose (Executable::node_plans), one per step; empty for the rest.
// `index_readers` are the nodes whose kernels range-check indices, in the order of their error records
// (Bindings::index_errors): Gather, and the cross-entropy ops with i64/i32 class labels.
struct PlannedLaunches {
  std::vector<NodeLaunch> launches;
  std::vector<std::string> plans;
  std::vector<const Node*> index_readers;
};
PlannedLaunches plan_node_launches(const CompiledGraph& graph, const DeviceContext& context, VendorSession* vendor);

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
