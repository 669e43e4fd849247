#pragma once
#include <memory>

#include "core/runtime/backend.hpp"

namespace porta::detail {

// The backend-agnostic passes: validate, order, hash and plan memory. Throws Unsupported listing
// every node `device` cannot run.
std::shared_ptr<const CompiledGraph> compile_graph(const Graph& graph, const DeviceImpl& device,
                                                   const CompileOptions& options);

}  // namespace porta::detail
