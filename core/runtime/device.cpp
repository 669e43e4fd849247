#include "porta/device.hpp"

#include "core/compile/compile.hpp"
#include "core/runtime/backend.hpp"
#include "core/runtime/executable_impl.hpp"
#include "porta/error.hpp"
#include "porta/executable.hpp"

namespace porta {

std::vector<BackendStatus> backends() {
  std::vector<BackendStatus> result;
  for (const auto& backend : detail::registry()) result.push_back(backend->status());
  return result;
}

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> result;
  for (const auto& backend : detail::registry()) {
    if (backend->name() == "ref") continue;
    for (auto& device : backend->status().devices) result.push_back(std::move(device));
  }
  return result;
}

Device Device::open(std::string_view text) {
  const detail::DeviceSpec spec = detail::parse_device_spec(text);
  return Device(detail::find_backend(spec).open(spec));
}

const DeviceInfo& Device::info() const { return impl_->info(); }

std::string Device::unsupported_reason(const Graph& graph, const Node& node, const CompileOptions& options) const {
  return impl_->unsupported_reason(graph, node, options);
}

Layout Device::preferred_layout(const Graph& graph, const Node& conv, const CompileOptions& options) const {
  return impl_->preferred_layout(graph, conv, options);
}

double Device::measure_fma_gflops() const { return impl_->measure_fma_gflops(); }
double Device::measure_copy_gbs() const { return impl_->measure_copy_gbs(); }

Executable Device::compile(const Graph& graph, const CompileOptions& options) const {
  return Executable(std::make_unique<detail::ExecutableImpl>(impl_, detail::compile_graph(graph, *impl_, options)));
}

MemoryEstimate Device::estimate_memory(const Graph& graph, const CompileOptions& options) const {
  const auto compiled = detail::compile_graph(graph, *impl_, options);
  const detail::MemoryPlan& plan = compiled->plan;
  return {.arena_bytes = plan.arena_bytes, .constant_bytes = plan.constant_bytes,
          .naive_arena_bytes = plan.naive_arena_bytes};
}

}  // namespace porta
