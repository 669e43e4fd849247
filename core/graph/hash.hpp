#pragma once
#include <cstdint>
#include <span>

#include "porta/graph.hpp"

namespace porta::detail {

// FNV-1a over what decides the computation: ops, parameters, wiring, shapes, dtypes, the order of
// outputs and the variables' assignments. Names and constant values are left out, so plan and
// kernel caches are shared between graphs that differ only in weights.
std::uint64_t structural_hash(const Graph& graph, std::span<const std::int32_t> order);

}  // namespace porta::detail
