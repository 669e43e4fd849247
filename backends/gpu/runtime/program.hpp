#pragma once
// A compiled graph on one GPU: one launch per node, all enqueued on the program's stream, then
// recorded into a CUDA/HIP graph and replayed (see plan/capture.hpp). Two events on the stream time
// every run; per-node events are added when profiling. An index out of range (a gather's, a class
// label of the cross-entropy ops) is raised by its kernel in a device record, read once after the
// run, so that these nodes are captured too.
#include <functional>
#include <memory>
#include <vector>

#include "backends/gpu/plan/capture.hpp"
#include "backends/gpu/runtime/buffer.hpp"
#include "backends/gpu/runtime/node_launch.hpp"
#include "backends/gpu/runtime/vendor.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {

class GpuProgram final : public Program {
 public:
  // `vendor` is the device's provider, used when the graph was compiled with impl=vendor.
  GpuProgram(std::shared_ptr<const DeviceContext> context, std::shared_ptr<const CompiledGraph> graph, bool graphs,
             const VendorProvider* vendor);
  RunTime run(DeviceBuffer& arena, DeviceBuffer& constants, NodeRecords records) override;

 private:
  void enqueue(const Bindings& bindings, std::span<double> node_seconds);
  void capture(const Bindings& bindings);  // leaves exec_ set, or turns graphs off on failure
  // Throws ref's error for the first index reader whose kernel raised its error record.
  void check_index_errors(const std::vector<gpu::IndexError>& records) const;

  std::shared_ptr<const DeviceContext> context_;
  std::shared_ptr<const CompiledGraph> graph_;
  Stream stream_;
  std::unique_ptr<VendorSession> vendor_;  // before the launches that use it
  std::vector<NodeLaunch> launches_;
  std::vector<std::string> plans_;  // per step: what prepare chose
  std::vector<const Node*> index_readers_;
  std::unique_ptr<GpuBuffer> index_errors_;  // one record per index reader; null without any
  gpu::CapturePolicy policy_;
  GpuGraphExec exec_;
  std::vector<Event> events_;  // one before each node and one after the last, when profiling
  Event run_start_, run_end_;  // around every run's work on the stream: its device time
};

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
