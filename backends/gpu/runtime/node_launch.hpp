#pragma once
// What a program runs per node: a launch that binds the run's device addresses and enqueues on the
// program's stream.
#include <functional>
#include <string>
#include <vector>

#include "backends/gpu/runtime/context.hpp"
#include "core/runtime/backend.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {

class VendorSession;

// Device addresses of the tensors of one run.
struct Bindings {
  const CompiledGraph* graph = nullptr;
  std::byte* arena = nullptr;
  std::byte* constants = nullptr;
  std::byte* operator()(Tensor t) const;
};

using NodeLaunch = std::function<void(const Bindings&, gpuStream_t)>;

// One launch per node of `graph.order`, with the kernel arguments planned once, here: the vendor
// library's where `vendor` (impl=vendor) runs the node, porta's kernel otherwise. `plans` says what
// porta's GEMM and conv kernels chose (Executable::node_plans), one per step; empty for the rest.
struct PlannedLaunches {
  std::vector<NodeLaunch> launches;
  std::vector<std::string> plans;
};
PlannedLaunches plan_node_launches(const CompiledGraph& graph, const DeviceContext& context, VendorSession* vendor);
// Whether a launch of `graph` reads indices back to the host to check them (Gather, and the
// cross-entropy ops with i64/i32 class labels): such a program cannot be captured into a CUDA/HIP
// graph and runs eagerly.
bool reads_indices_back(const Graph& graph);

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
