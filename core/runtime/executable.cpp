#include "porta/executable.hpp"

#include <algorithm>
#include <cstring>

#include "core/runtime/executable_impl.hpp"
#include "porta/error.hpp"

namespace porta {
namespace detail {
namespace {

std::string names_of(const Graph& graph, bool inputs) {
  std::string names;
  const auto append = [&](const std::string& n) { names += (names.empty() ? "" : ", ") + n; };
  if (inputs)
    for (const Tensor t : graph.inputs()) append(graph.info(t).name);
  else
    for (const auto& [name, t] : graph.outputs()) append(name);
  return names.empty() ? "none" : names;
}

// Element offset in the caller's buffer of dense element `index` of a strided input.
std::int64_t strided_offset(std::int64_t index, const Shape& shape, const Shape& strides) {
  std::int64_t offset = 0;
  for (auto d = shape.size(); d-- > 0;) {
    offset += (index % shape[d]) * strides[d];
    index /= shape[d];
  }
  return offset;
}

}  // namespace

ExecutableImpl::ExecutableImpl(std::shared_ptr<DeviceImpl> device, std::shared_ptr<const CompiledGraph> compiled)
    : device_(std::move(device)), compiled_(std::move(compiled)) {
  const MemoryPlan& plan = compiled_->plan;
  arena_ = device_->allocate(std::max<std::uint64_t>(plan.arena_bytes, 1));
  constants_ = device_->allocate(std::max<std::uint64_t>(plan.constant_bytes, 1));
  const auto& tensors = compiled_->graph.tensors();
  std::vector<bool> written(tensors.size(), false);  // a variable's new value, in the variable's bytes
  for (const VariableWrite& w : compiled_->writes) written[static_cast<std::size_t>(w.value.id)] = true;
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const auto offset = static_cast<std::size_t>(plan.offset[t]);
    if (plan.constant_offset[t] >= 0)
      constants_->write(static_cast<std::size_t>(plan.constant_offset[t]), *tensors[t].data);
    else if (tensors[t].role == Role::Variable && plan.offset[t] >= 0)
      arena_->write(offset, *tensors[t].data);
    else if (tensors[t].role == Role::Intermediate && plan.offset[t] >= 0 && !written[t])
      poisoned_.emplace_back(offset, tensors[t].desc.bytes());
  }
  program_ = device_->prepare(compiled_);
  plan_reports();
  if (compiled_->options.profile) node_seconds_.assign(compiled_->order.size(), 0.0);
}

const TensorInfo& ExecutableImpl::input(std::string_view name) const {
  const Graph& graph = compiled_->graph;
  for (const Tensor t : graph.inputs())
    if (graph.info(t).name == name) return graph.info(t);
  throw Error(ErrorCode::NotFound, "no input named '" + std::string(name) + "' (inputs: " + names_of(graph, true) + ")");
}

const TensorInfo& ExecutableImpl::variable(std::string_view name) const {
  const Graph& graph = compiled_->graph;
  std::string names;
  for (const Tensor t : graph.variables()) {
    if (graph.info(t).name == name) return graph.info(t);
    names += (names.empty() ? "" : ", ") + graph.info(t).name;
  }
  throw Error(ErrorCode::NotFound, "no variable named '" + std::string(name) + "' (variables: " +
                                       (names.empty() ? "none" : names) + ")");
}

Tensor ExecutableImpl::output(std::string_view name) const {
  for (const auto& [n, t] : compiled_->graph.outputs())
    if (n == name) return t;
  throw Error(ErrorCode::NotFound,
              "no output named '" + std::string(name) + "' (outputs: " + names_of(compiled_->graph, false) + ")");
}

void ExecutableImpl::set(const TensorInfo& info, std::span<const std::byte> bytes, bool from_f32) {
  const DType dtype = info.desc.dtype;
  const std::size_t source_size = from_f32 ? sizeof(float) : size_of(dtype);
  const std::int64_t count = info.desc.numel();
  std::int64_t needed = count;
  if (!info.input_strides.empty()) {
    needed = 1;
    for (std::size_t d = 0; d < info.desc.shape.size(); ++d) needed += info.input_strides[d] * (info.desc.shape[d] - 1);
  }
  const std::uint64_t given = bytes.size() / source_size;
  const bool fits = bytes.size() % source_size == 0 && (info.input_strides.empty() ? given == static_cast<std::uint64_t>(needed)
                                                                                   : given >= static_cast<std::uint64_t>(needed));
  if (!fits)
    throw Error(ErrorCode::ShapeMismatch,
                std::string(info.role == Role::Variable ? "variable" : "input") + " '" + info.name + "' " + to_string(info.desc.shape) + (info.input_strides.empty() ? "" : " with strides " + to_string(info.input_strides)) +
                    " needs " + (info.input_strides.empty() ? "" : "at least ") + std::to_string(needed) + " " +
                    (from_f32 ? "float" : std::string(to_string(dtype))) + " values, got " +
                    std::to_string(static_cast<double>(bytes.size()) / static_cast<double>(source_size)));

  const bool strided = !info.input_strides.empty();
  const auto id = static_cast<std::size_t>(&info - compiled_->graph.tensors().data());
  const auto offset = static_cast<std::size_t>(compiled_->plan.offset[id]);
  if (!strided && (!from_f32 || dtype == DType::f32)) {  // already the stored bytes: no staging copy
    const std::lock_guard lock(mutex_);
    return arena_->write(offset, bytes);
  }
  std::vector<std::byte> dense(info.desc.bytes());
  for (std::int64_t i = 0; i < count; ++i) {
    const auto src = static_cast<std::size_t>(strided ? strided_offset(i, info.desc.shape, info.input_strides) : i);
    const auto dst = static_cast<std::size_t>(i);
    if (from_f32)
      store_from_f32(dense.data(), dst, dtype, reinterpret_cast<const float*>(bytes.data())[src]);
    else
      std::memcpy(dense.data() + dst * source_size, bytes.data() + src * source_size, source_size);
  }
  const std::lock_guard lock(mutex_);
  arena_->write(offset, dense);
}

// An output is complete once the node that makes it has run: the planner keeps an output's bytes
// to itself until the run ends, so no later node writes them.
void ExecutableImpl::plan_reports() {
  const std::vector<std::int32_t>& order = compiled_->order;
  outputs_after_.assign(order.size() + 1, {});
  report_steps_.assign(order.size(), 0);
  const auto& outputs = compiled_->graph.outputs();
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const std::int32_t producer = compiled_->graph.info(outputs[o].second).producer;
    const auto step = static_cast<std::size_t>(std::find(order.begin(), order.end(), producer) - order.begin());
    outputs_after_[producer < 0 ? order.size() : step].push_back(o);
    if (producer >= 0 && step < order.size()) report_steps_[step] = 1;
  }
}

void ExecutableImpl::report(std::size_t step, const RunOptions& options) const {
  for (const std::size_t o : outputs_after_[step]) {
    const auto& [name, tensor] = compiled_->graph.outputs()[o];
    options.output_ready(name, read_locked(tensor));
  }
}

void ExecutableImpl::run(const RunOptions& options) {
  const std::lock_guard lock(mutex_);
  if (compiled_->options.poison_memory)  // 0xff.. is NaN in f32, f16 and bf16
    for (const auto& [offset, bytes] : poisoned_) arena_->fill(offset, bytes, std::byte{0xff});
  last_run_ = {};  // a run that throws has no time
  std::vector<std::string> plans;
  if (!planned_) plans.resize(compiled_->order.size());
  NodeRecords records{node_seconds_, plans};
  if (options.output_ready) {
    records.report = report_steps_;
    records.completed = [&](std::size_t step) { report(step, options); };
  }
  last_run_ = program_->run(*arena_, *constants_, records);
  if (!planned_) node_plans_ = std::move(plans), planned_ = true;
  if (options.output_ready) report(compiled_->order.size(), options);
}

RunTime ExecutableImpl::last_run_time() const {
  const std::lock_guard lock(mutex_);
  return last_run_;
}

std::vector<std::byte> ExecutableImpl::output_bytes(std::string_view name) const { return read(output(name)); }

std::vector<std::byte> ExecutableImpl::variable_bytes(std::string_view name) const {
  const TensorInfo& info = variable(name);
  return read(Tensor{static_cast<std::int32_t>(&info - compiled_->graph.tensors().data())});
}

std::vector<std::byte> ExecutableImpl::read(Tensor t) const {
  const std::lock_guard lock(mutex_);
  return read_locked(t);
}

std::vector<std::byte> ExecutableImpl::read_locked(Tensor t) const {
  const auto id = static_cast<std::size_t>(t.id);
  std::vector<std::byte> bytes(compiled_->graph.info(t).desc.bytes());
  if (compiled_->plan.constant_offset[id] >= 0)
    constants_->read(static_cast<std::size_t>(compiled_->plan.constant_offset[id]), bytes);
  else
    arena_->read(static_cast<std::size_t>(compiled_->plan.offset[id]), bytes);
  return bytes;
}

// One entry per step of the order: `make(node, step)`.
template <class Entry, class Make>
std::vector<Entry> ExecutableImpl::per_node(std::size_t steps, Make make) const {
  std::vector<Entry> entries;
  for (std::size_t i = 0; i < steps; ++i)
    entries.push_back(make(compiled_->graph.nodes()[static_cast<std::size_t>(compiled_->order[i])], i));
  return entries;
}

std::vector<NodeTiming> ExecutableImpl::node_timings() const {
  const std::lock_guard lock(mutex_);
  return per_node<NodeTiming>(node_seconds_.size(),
                              [&](const Node& n, std::size_t i) { return NodeTiming{n.name, n.op, node_seconds_[i]}; });
}

std::vector<NodePlan> ExecutableImpl::node_plans() const {
  const std::lock_guard lock(mutex_);
  return per_node<NodePlan>(node_plans_.size(),
                            [&](const Node& n, std::size_t i) { return NodePlan{n.name, n.op, node_plans_[i]}; });
}

}  // namespace detail

Executable::Executable(std::unique_ptr<detail::ExecutableImpl> impl) : impl_(std::move(impl)) {}
Executable::Executable(Executable&&) noexcept = default;
Executable& Executable::operator=(Executable&&) noexcept = default;
Executable::~Executable() = default;

void Executable::set_input(std::string_view name, std::span<const float> values) {
  impl_->set(impl_->input(name), std::as_bytes(values), true);
}
void Executable::set_input_bytes(std::string_view name, std::span<const std::byte> bytes) {
  impl_->set(impl_->input(name), bytes, false);
}
void Executable::set_variable(std::string_view name, std::span<const float> values) {
  impl_->set(impl_->variable(name), std::as_bytes(values), true);
}
void Executable::set_variable_bytes(std::string_view name, std::span<const std::byte> bytes) {
  impl_->set(impl_->variable(name), bytes, false);
}
void Executable::run() { impl_->run({}); }
void Executable::run(const RunOptions& options) { impl_->run(options); }
RunTime Executable::last_run_time() const { return impl_->last_run_time(); }

namespace {

std::vector<float> widened(const std::vector<std::byte>& bytes, DType dtype) {
  std::vector<float> values(bytes.size() / size_of(dtype));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = load_as_f32(bytes.data(), i, dtype);
  return values;
}

}  // namespace

std::vector<float> Executable::output(std::string_view name) const {
  return widened(impl_->output_bytes(name), output_desc(name).dtype);
}
std::vector<std::byte> Executable::output_bytes(std::string_view name) const { return impl_->output_bytes(name); }
std::vector<float> Executable::variable(std::string_view name) const {
  return widened(impl_->variable_bytes(name), variable_desc(name).dtype);
}
std::vector<std::byte> Executable::variable_bytes(std::string_view name) const { return impl_->variable_bytes(name); }
std::vector<std::string> Executable::variable_names() const {
  std::vector<std::string> names;
  for (const Tensor t : impl_->compiled().graph.variables()) names.push_back(impl_->compiled().graph.info(t).name);
  return names;
}
const TensorDesc& Executable::variable_desc(std::string_view name) const { return impl_->variable(name).desc; }

const TensorDesc& Executable::input_desc(std::string_view name) const { return impl_->input(name).desc; }
const TensorDesc& Executable::output_desc(std::string_view name) const {
  return impl_->compiled().graph.desc(impl_->output(name));
}
std::vector<NodeTiming> Executable::node_timings() const { return impl_->node_timings(); }
std::vector<NodePlan> Executable::node_plans() const { return impl_->node_plans(); }
std::uint64_t Executable::planned_peak_bytes() const {
  return impl_->compiled().plan.arena_bytes + impl_->compiled().plan.constant_bytes;
}
std::uint64_t Executable::graph_hash() const { return impl_->compiled().hash; }
const DeviceInfo& Executable::device() const { return impl_->device(); }

}  // namespace porta
