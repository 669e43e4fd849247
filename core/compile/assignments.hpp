#pragma once
// How each Graph::assign reaches its variable (docs/training.md): the node computing the new value
// writes it straight into the variable's bytes where no later node still reads the old value, else
// a copy node at the end of the run does. Either way the backends see ordinary nodes and the memory
// plan places the written tensor over the variable.
#include <span>
#include <vector>

#include "core/runtime/backend.hpp"

namespace porta::detail {

// One write per assignment of `graph`, given the execution `order` of its live nodes; appends a copy
// (a Reshape to the same shape) to `graph` for each value that cannot be written in place. A new
// order must be taken afterwards: the copies come last.
std::vector<VariableWrite> lower_assignments(Graph& graph, std::span<const std::int32_t> order);

}  // namespace porta::detail
