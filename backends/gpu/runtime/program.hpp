#pragma once
// A compiled graph on one GPU: one launch per node, all enqueued on the program's stream, then
// recorded into a CUDA/HIP graph and replayed (see plan/capture.hpp), with per-node events when
// profiling.
#include <functional>
#include <memory>
#include <vector>

#include "backends/gpu/plan/capture.hpp"
#include "backends/gpu/runtime/context.hpp"
#include "core/runtime/backend.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {

// Device addresses of the tensors of one run.
struct Bindings {
  const CompiledGraph* graph = nullptr;
  std::byte* arena = nullptr;
  std::byte* constants = nullptr;
  std::byte* operator()(Tensor t) const;
};

using NodeLaunch = std::function<void(const Bindings&, gpuStream_t)>;

// One launch per node of `graph.order`, with the kernel arguments planned once, here.
std::vector<NodeLaunch> plan_node_launches(const CompiledGraph& graph, const DeviceContext& context);

class GpuProgram final : public Program {
 public:
  GpuProgram(std::shared_ptr<const DeviceContext> context, std::shared_ptr<const CompiledGraph> graph, bool graphs);
  void run(DeviceBuffer& arena, DeviceBuffer& constants, std::span<double> node_seconds) override;

 private:
  void enqueue(const Bindings& bindings, std::span<double> node_seconds);
  void capture(const Bindings& bindings);  // leaves exec_ set, or turns graphs off on failure

  std::shared_ptr<const DeviceContext> context_;
  std::shared_ptr<const CompiledGraph> graph_;
  std::vector<NodeLaunch> launches_;
  Stream stream_;
  gpu::CapturePolicy policy_;
  GpuGraphExec exec_;
  std::vector<Event> events_;  // one before each node and one after the last, when profiling
};

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
