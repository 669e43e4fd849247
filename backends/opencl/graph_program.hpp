#pragma once
// A compiled graph on an OpenCL device: every node's launches are enqueued in order on the
// device's in-order queue, then one clFinish. Each run is timed by profiling events
// (the queue has profiling enabled): the first command's start to the last one's end. The queue is
// the device's, shared by its executables, so runs of another executable on other threads can fall
// inside that span.
#include <memory>

#include "backends/opencl/launch_builder.hpp"

namespace porta::detail {

class ClGraphProgram final : public Program {
 public:
  ClGraphProgram(std::shared_ptr<const ClDevice> device, std::shared_ptr<const CompiledGraph> graph,
                 KernelPrograms& programs);
  RunTime run(DeviceBuffer& arena, DeviceBuffer& constants, NodeRecords records) override;

 private:
  std::shared_ptr<const ClDevice> device_;
  std::shared_ptr<const CompiledGraph> graph_;
  std::vector<Launch> launches_;
  std::vector<std::string> plans_;  // per step: what prepare chose (LaunchBuilder::note_plan)
  std::vector<ClEvent> events_;  // one per launch while profiling
};

}  // namespace porta::detail
