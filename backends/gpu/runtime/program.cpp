#include "backends/gpu/runtime/program.hpp"

#include <algorithm>
#include <string>

#include "backends/gpu/plan/op_args.hpp"
#include "backends/gpu/runtime/buffer.hpp"
#include "backends/gpu/runtime/check.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {

std::byte* Bindings::operator()(Tensor t) const {
  const auto id = static_cast<std::size_t>(t.id);
  const MemoryPlan& plan = graph->plan;
  return plan.constant_offset[id] >= 0 ? constants + plan.constant_offset[id] : arena + plan.offset[id];
}

GpuProgram::GpuProgram(std::shared_ptr<const DeviceContext> context, std::shared_ptr<const CompiledGraph> graph,
                       bool graphs, const VendorProvider* vendor)
    : context_(std::move(context)),
      graph_(std::move(graph)),
      stream_(*context_),
      vendor_(graph_->options.impl == Impl::Vendor && vendor != nullptr
                  ? vendor->session(context_, stream_.get(), graph_->options)
                  : nullptr),
      policy_(graphs),
      run_start_(make_event(*context_)),
      run_end_(make_event(*context_)) {
  PlannedLaunches planned = plan_node_launches(*graph_, *context_, vendor_.get());
  launches_ = std::move(planned.launches);
  plans_ = std::move(planned.plans);
  index_readers_ = std::move(planned.index_readers);
  if (!index_readers_.empty())
    index_errors_ = std::make_unique<GpuBuffer>(context_, index_readers_.size() * sizeof(gpu::IndexError));
  if (graph_->options.profile)
    for (std::size_t i = 0; i <= launches_.size(); ++i) events_.push_back(make_event(*context_));
}

RunTime GpuProgram::run(DeviceBuffer& arena, DeviceBuffer& constants, NodeRecords records) {
  const std::span<double> node_seconds = records.seconds;
  std::copy_n(plans_.begin(), std::min(plans_.size(), records.plans.size()), records.plans.begin());
  context_->make_current();
  auto* index_errors = index_errors_ ? reinterpret_cast<gpu::IndexError*>(index_errors_->data()) : nullptr;
  const Bindings bindings{graph_.get(), static_cast<GpuBuffer&>(arena).data(),
                          static_cast<GpuBuffer&>(constants).data(), index_errors};
  const bool profiling = !node_seconds.empty() && !events_.empty();
  std::vector<gpu::IndexError> raised(index_readers_.size());
  const std::size_t record_bytes = raised.size() * sizeof(gpu::IndexError);
  if (index_errors != nullptr)
    check(gpuMemsetAsync(index_errors, 0, record_bytes, stream_.get()), context_->spec(), "clearing index errors");
  // Recorded outside any capture, so that they time the replay as well as eager runs.
  check(gpuEventRecord(run_start_.get(), stream_.get()), context_->spec(), "recording an event");
  switch (policy_.next_run(bindings.arena, bindings.constants, profiling)) {
    case gpu::RunMode::Eager: enqueue(bindings, profiling ? node_seconds : std::span<double>{}); break;
    case gpu::RunMode::Capture:
      capture(bindings);
      if (!policy_.have_graph()) {
        enqueue(bindings, {});
        break;
      }
      [[fallthrough]];
    case gpu::RunMode::Replay:
      check(gpuGraphLaunch(exec_.get(), stream_.get()), context_->spec(), "launching the captured graph");
      break;
  }
  check(gpuEventRecord(run_end_.get(), stream_.get()), context_->spec(), "recording an event");
  if (index_errors != nullptr)
    check(gpuMemcpyAsync(raised.data(), index_errors, record_bytes, gpuMemcpyDeviceToHost, stream_.get()),
          context_->spec(), "reading index errors");
  stream_.synchronize(*context_, "running the graph");
  check_index_errors(raised);
  // Every output is reported once the stream has finished, in execution order: the contract's
  // fallback. An event after each reported node, polled between launches, would report earlier.
  for (std::size_t step = 0; step < records.report.size(); ++step)
    if (records.report[step]) records.completed(step);
  float run_ms = 0.0f;
  check(gpuEventElapsedTime(&run_ms, run_start_.get(), run_end_.get()), context_->spec(), "reading the run's time");
  const RunTime time{run_ms * 1e-3, RunClock::Device};
  if (!profiling) return time;
  for (std::size_t i = 0; i < launches_.size(); ++i) {
    float ms = 0.0f;
    check(gpuEventElapsedTime(&ms, events_[i].get(), events_[i + 1].get()), context_->spec(), "reading node times");
    node_seconds[i] = ms * 1e-3;
  }
  return time;
}

void GpuProgram::enqueue(const Bindings& bindings, std::span<double> node_seconds) {
  const bool timed = !node_seconds.empty();
  const gpuStream_t stream = stream_.get();
  for (std::size_t step = 0; step < launches_.size(); ++step) {
    if (timed) check(gpuEventRecord(events_[step].get(), stream), context_->spec(), "recording an event");
    launches_[step](bindings, stream);
    const gpuError_t error = gpuGetLastError();
    if (error != gpuSuccess) {
      const Node& node = graph_->graph.nodes()[static_cast<std::size_t>(graph_->order[step])];
      check(error, context_->spec(), "launching " + std::string(to_string(node.op)) + " '" + node.name + "'");
    }
  }
  if (timed) check(gpuEventRecord(events_.back().get(), stream), context_->spec(), "recording an event");
}

void GpuProgram::check_index_errors(const std::vector<gpu::IndexError>& records) const {
  const Graph& graph = graph_->graph;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (records[i].raised == 0) continue;
    const Node& node = *index_readers_[i];
    if (node.op == OpKind::Gather)
      gather_coordinate(records[i].index, gpu::index_gather_args(graph, node).axis, node);
    else  // a cross-entropy op's class label
      label_coordinate(records[i].index, graph.shape(node.inputs[0]).back(), node);
  }
}

void GpuProgram::capture(const Bindings& bindings) {
  const gpuStream_t stream = stream_.get();
  exec_.reset();
  check(gpuStreamBeginCapture(stream, gpuStreamCaptureModeThreadLocal), context_->spec(), "starting graph capture");
  gpuGraph_t recorded = nullptr;
  try {
    enqueue(bindings, {});
  } catch (...) {
    (void)gpuStreamEndCapture(stream, &recorded);  // leaves the stream usable; the error is the launch's
    const GpuGraph discard(recorded);
    policy_.capture_failed();
    throw;
  }
  const gpuError_t ended = gpuStreamEndCapture(stream, &recorded);
  const GpuGraph graph(recorded);
  gpuGraphExec_t exec = nullptr;
  if (ended != gpuSuccess || gpu_graph_instantiate(&exec, graph.get()) != gpuSuccess) {
    (void)gpuGetLastError();
    policy_.capture_failed();  // the program still runs, eagerly
    return;
  }
  exec_.reset(exec);
  policy_.captured();
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
