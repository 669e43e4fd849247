#pragma once
// Composite ops a device refuses, spelt out in the ops they are made of before the compiler checks
// the graph: an imported model's attention, folded into one node at import, still runs on a device
// whose attention kernel cannot take its shape.
#include <optional>
#include <span>

#include "core/runtime/backend.hpp"
#include "porta/graph.hpp"

namespace porta::detail {

// The graph with each live node of `order` that `device` refuses and that has a composition
// (attention: matmul, scale, mask, softmax, matmul) replaced by that composition; nothing when no
// such node is refused. Whether the device runs the composition is for the compiler's check.
std::optional<Graph> decompose_refused(const Graph& graph, std::span<const std::int32_t> order,
                                       const DeviceImpl& device, const CompileOptions& options);

}  // namespace porta::detail
