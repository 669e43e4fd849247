#include "backends/opencl/launch_builder.hpp"

#include <vector>

#include "backends/opencl/cl_error.hpp"
#include "core/runtime/plan_log.hpp"

namespace porta::detail {

KernelArgs::KernelArgs(ClKernel kernel, const MemoryPlan& plan, std::string_view name) : plan_(plan), name_(name) {
  launch_.kernel = std::move(kernel);
}

void KernelArgs::set(std::size_t size, const void* value) {
  const cl_int status = clSetKernelArg(launch_.kernel.get(), next_, size, value);
  if (status != CL_SUCCESS)
    throw_cl_error("clSetKernelArg", status, "kernel '" + std::string(name_) + "', argument " + std::to_string(next_));
  ++next_;
}

KernelArgs& KernelArgs::tensor(Tensor t) {
  const auto id = static_cast<std::size_t>(t.id);
  const std::int64_t offset = plan_.constant_offset[id] >= 0 ? plan_.constant_offset[id] : plan_.offset[id];
  if (offset < 0) throw Error(ErrorCode::Internal, "tensor " + std::to_string(t.id) + " has no place in the memory plan");
  launch_.buffers.emplace_back(next_++, t.id);
  const auto bytes = static_cast<cl_ulong>(offset);
  set(sizeof bytes, &bytes);
  return *this;
}

KernelArgs& KernelArgs::i64(std::int64_t value) {
  const auto v = static_cast<cl_long>(value);
  set(sizeof v, &v);
  return *this;
}

KernelArgs& KernelArgs::i32(std::int32_t value) {
  const auto v = static_cast<cl_int>(value);
  set(sizeof v, &v);
  return *this;
}

KernelArgs& KernelArgs::f32(float value) {
  set(sizeof value, &value);
  return *this;
}

KernelArgs& KernelArgs::long8(const Long8& value) {
  cl_long8 v;
  for (std::size_t i = 0; i < 8; ++i) v.s[i] = value[i];
  set(sizeof v, &v);
  return *this;
}

KernelLaunch KernelArgs::finish() && { return std::move(launch_); }

KernelArgs LaunchBuilder::kernel(std::string_view stem, std::string_view name, DType storage) {
  const ClProgram program = programs_.get(stem, storage);
  cl_int status = CL_SUCCESS;
  const std::string kernel_name(name);
  ClKernel kernel(clCreateKernel(program.get(), kernel_name.c_str(), &status));
  if (status != CL_SUCCESS) throw_cl_error("clCreateKernel", status, "kernel '" + kernel_name + "' of " + std::string(stem) + ".cl");
  return KernelArgs(std::move(kernel), graph_.plan, name);
}

void LaunchBuilder::enqueue_1d(KernelArgs args, std::int64_t items) {
  constexpr std::size_t group = 64;
  if (items <= 0) return;
  const auto global = (static_cast<std::size_t>(items) + group - 1) / group * group;
  enqueue(std::move(args), 1, {global, 1, 1}, {group, 1, 1});
}

void LaunchBuilder::enqueue(KernelArgs args, cl_uint dims, std::array<std::size_t, 3> global,
                            std::array<std::size_t, 3> local) {
  for (const std::size_t g : global)
    if (g == 0) return;  // an empty tensor: nothing to compute
  KernelLaunch launch = std::move(args).finish();
  launch.dims = dims;
  launch.global = global;
  launch.local = local;
  launches_.push_back({step_, std::move(launch)});
}

void LaunchBuilder::note_plan(std::string_view problem, std::string plan) {
  if (plans_verbose()) detail::note_plan("opencl", problem, plan);
  std::string& record = plans_[step_];
  record = record.empty() ? std::move(plan) : record + "; " + plan;
}

void LaunchBuilder::copy(Tensor source, Tensor destination) {
  const MemoryPlan& plan = graph_.plan;
  const auto s = static_cast<std::size_t>(source.id), d = static_cast<std::size_t>(destination.id);
  const std::size_t bytes = desc(destination).bytes();
  // Same buffer and offset: the data is already in place. A partial overlap cannot be copied by
  // OpenCL (CL_MEM_COPY_OVERLAP), and porta's planner never makes one for live tensors.
  if (plan.constant_offset[s] < 0 && plan.offset[s] == plan.offset[d]) return;
  if (plan.constant_offset[s] < 0) {
    const auto a = static_cast<std::size_t>(plan.offset[s]), b = static_cast<std::size_t>(plan.offset[d]);
    if (a < b + bytes && b < a + bytes)
      throw Error(ErrorCode::Internal, "memory plan overlaps a copy's source and destination");
  }
  if (bytes == 0) return;
  // Assigned in place: GCC 12 warned of maybe-uninitialized members when a Launch holding a
  // CopyLaunch was moved into the vector.
  Launch& launch = launches_.emplace_back();
  launch.step = step_;
  launch.work = CopyLaunch{source.id, destination.id, bytes};
}

void LaunchBuilder::check_indices(Tensor t, std::function<void(std::int64_t)> check) {
  library({[t, d = desc(t), check = std::move(check)](cl_command_queue queue, const LocateTensor& locate, cl_event*) {
    std::vector<std::byte> bytes(d.bytes());
    const ClTensorRef at = locate(t);
    check_cl(clEnqueueReadBuffer(queue, at.mem, CL_TRUE, at.offset, bytes.size(), bytes.data(), 0, nullptr, nullptr),
             "clEnqueueReadBuffer");
    for (std::size_t i = 0; i < static_cast<std::size_t>(d.numel()); ++i)
      check(load_as_i64(bytes.data(), i, d.dtype));
  }});
}

Long8 to_long8(const Shape& dims, std::int64_t fill) {
  Long8 v;
  v.fill(fill);
  const std::size_t lead = 8 - dims.size();
  for (std::size_t i = 0; i < dims.size(); ++i) v[lead + i] = dims[i];
  return v;
}

}  // namespace porta::detail
