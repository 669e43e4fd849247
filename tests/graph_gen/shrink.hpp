#pragma once
// Turns a failing random graph into a small one a developer can paste into a test.
#include <functional>
#include <string>

#include "graph_gen/random_graph.hpp"

namespace porta::graph_gen {

// Greedy and deterministic: tries, in a fixed order, dropping an output, bypassing a step (its
// readers take one of its operands), cutting the graph above a step (its result becomes a new
// input), shrinking the inputs' dimensions and simplifying a step's parameters, and keeps each
// candidate that still builds and for which `fails` holds, until none does.
Recipe shrink(Recipe recipe, const std::function<bool(const Graph&)>& fails);

// C++ that rebuilds `graph` through the public builder, constants' values included, as a block
// that declares `Graph g`.
std::string builder_code(const Graph& graph);

}  // namespace porta::graph_gen
