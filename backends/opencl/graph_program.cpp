#include "backends/opencl/graph_program.hpp"

#include <algorithm>

#include "backends/opencl/buffer.hpp"
#include "backends/opencl/cl_error.hpp"
#include "backends/opencl/ops/ops.hpp"
#include "porta/error.hpp"
#include "backends/opencl/vendor/provider.hpp"

namespace porta::detail {

ClGraphProgram::ClGraphProgram(std::shared_ptr<const ClDevice> device, std::shared_ptr<const CompiledGraph> graph,
                               KernelPrograms& programs)
    : device_(std::move(device)), graph_(std::move(graph)) {
  LaunchBuilder builder(programs, *graph_);
  // unsupported_reason has turned impl=vendor away unless the provider is there.
  const ClVendorProvider* vendor = graph_->options.impl == Impl::Vendor ? opencl_vendor_provider() : nullptr;
  if (graph_->options.impl == Impl::Vendor && !vendor)
    throw Error(ErrorCode::Unsupported, "this build has no OpenCL vendor library");
  for (std::size_t step = 0; step < graph_->order.size(); ++step) {
    const Node& node = graph_->graph.nodes()[static_cast<std::size_t>(graph_->order[step])];
    builder.set_step(step);
    (vendor ? vendor->op(node.op) : opencl_op(node.op))(builder, node);
  }
  launches_ = builder.take();
  plans_ = builder.take_plans();
  events_.resize(launches_.size());
}

namespace {

ClEvent enqueue_marker(cl_command_queue queue) {
  cl_event event = nullptr;
  check_cl(clEnqueueMarkerWithWaitList(queue, 0, nullptr, &event), "clEnqueueMarkerWithWaitList");
  return ClEvent(event);
}

}  // namespace

RunTime ClGraphProgram::run(DeviceBuffer& arena, DeviceBuffer& constants, NodeRecords records) {
  const std::span<double> node_seconds = records.seconds;
  const cl_mem arena_mem = static_cast<ClBuffer&>(arena).mem(), constant_mem = static_cast<ClBuffer&>(constants).mem();
  const MemoryPlan& plan = graph_->plan;
  const auto mem_of = [&](std::int32_t id) {
    return plan.constant_offset[static_cast<std::size_t>(id)] >= 0 ? constant_mem : arena_mem;
  };
  const auto offset_of = [&](std::int32_t id) {
    const auto i = static_cast<std::size_t>(id);
    return static_cast<std::size_t>(plan.constant_offset[i] >= 0 ? plan.constant_offset[i] : plan.offset[i]);
  };
  const LocateTensor locate = [&](Tensor t) { return ClTensorRef{mem_of(t.id), offset_of(t.id)}; };
  std::copy(plans_.begin(), plans_.begin() + static_cast<std::ptrdiff_t>(records.plans.size()), records.plans.begin());
  const bool profile = !node_seconds.empty();
  std::fill(node_seconds.begin(), node_seconds.end(), 0.0);
  cl_command_queue queue = device_->queue.get();
  // Reports the flagged steps before `end` (every launch of them enqueued) once the queue is done.
  std::size_t reported = 0;
  const auto report_before = [&](std::size_t end) {
    for (bool finished = false; reported < std::min(end, records.report.size()); ++reported) {
      if (!records.report[reported]) continue;
      if (!finished) check_cl(clFinish(queue), "clFinish"), finished = true;
      records.completed(reported);
    }
  };
  if (launches_.empty()) {  // views only: nothing ran on the device
    report_before(records.report.size());
    return {};
  }
  // The run's time spans the first command's start to the last one's end. A library call may run
  // several kernels and give the event of its last one only, so markers stand in at the edges.
  ClEvent first, last;
  if (std::holds_alternative<LibraryLaunch>(launches_.front().work)) first = enqueue_marker(queue);
  for (std::size_t i = 0; i < launches_.size(); ++i) {
    const bool edge = i == 0 || i + 1 == launches_.size();
    cl_event event = nullptr;
    cl_event* event_out = profile || edge ? &event : nullptr;
    if (const auto* k = std::get_if<KernelLaunch>(&launches_[i].work)) {
      for (const auto& [index, id] : k->buffers) {
        const cl_mem mem = mem_of(id);
        check_cl(clSetKernelArg(k->kernel.get(), index, sizeof mem, &mem), "clSetKernelArg");
      }
      check_cl(clEnqueueNDRangeKernel(queue, k->kernel.get(), k->dims, nullptr, k->global.data(), k->local.data(), 0,
                                      nullptr, event_out),
               "clEnqueueNDRangeKernel");
    } else if (const auto* call = std::get_if<LibraryLaunch>(&launches_[i].work)) {
      call->enqueue(queue, locate, event_out);
    } else {
      const auto& c = std::get<CopyLaunch>(launches_[i].work);
      check_cl(clEnqueueCopyBuffer(queue, mem_of(c.source), mem_of(c.destination), offset_of(c.source),
                                   offset_of(c.destination), c.bytes, 0, nullptr, event_out),
               "clEnqueueCopyBuffer");
    }
    ClEvent owned(event);
    if (!first) first = owned;
    if (i + 1 == launches_.size()) last = owned;
    if (profile) events_[i] = std::move(owned);
    report_before(i + 1 < launches_.size() ? launches_[i + 1].step : records.report.size());
  }
  if (!last) last = enqueue_marker(queue);  // the last call gave no event
  check_cl(clFinish(queue), "clFinish");
  const RunTime time{(static_cast<double>(profiling_ns(last, CL_PROFILING_COMMAND_END)) -
                      static_cast<double>(profiling_ns(first, CL_PROFILING_COMMAND_START))) * 1e-9,
                     RunClock::Device};
  if (!profile) return time;
  for (std::size_t i = 0; i < launches_.size(); ++i) {
    if (!events_[i]) continue;  // a library call that gave no event
    node_seconds[launches_[i].step] +=
        static_cast<double>(profiling_ns(events_[i], CL_PROFILING_COMMAND_END) -
                            profiling_ns(events_[i], CL_PROFILING_COMMAND_START)) * 1e-9;
  }
  return time;
}

}  // namespace porta::detail
