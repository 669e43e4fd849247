#pragma once
// The whole-graph differential check: a graph compiled with the compile passes off and on, on ref
// and on the devices under test, each output against ref's with the passes off.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graph_gen/random_graph.hpp"
#include "op_cases/verify.hpp"

namespace porta::graph_gen {

// The limits an output of `graph` is judged by: the per-op limits of verify.hpp summed over the ops
// it depends on (see differential.cpp).
cases::Limits output_limits(const Graph& graph, Tensor output);

// The limits each output of `graph` is judged by on the inputs cases::set_random_inputs(input_seed)
// sets: output_limits, times how much the output moves when its inputs and constants do (a
// normalisation of values close together moves far), times a margin.
std::vector<cases::Limits> judged_output_limits(const Graph& graph, std::uint64_t input_seed);

struct Mismatch {
  std::string spec;  // of the device that disagreed
  bool optimize = false;
  std::string detail;
};

struct Skip {
  std::string spec;    // of a device that cannot run the graph, or "ref" where its outputs overflow
  std::string reason;
};

struct CheckOutcome {
  std::vector<Mismatch> mismatches;
  std::vector<Skip> skipped;
};

// `devices`: those under test. ref with the passes on is checked as well. Inputs come from
// cases::set_random_inputs(input_seed); memory is poisoned, so an unwritten output fails.
CheckOutcome check_graph(const Graph& graph, std::span<const Device> devices, std::uint64_t input_seed);

// Shrinks `recipe`, whose graph fails `mismatch`, while it keeps failing there, and returns the
// shrunk graph as builder code under a comment that says how to rerun it and what failed.
std::string shrunk_failure(const Recipe& recipe, std::span<const Device> devices, const Mismatch& mismatch);

}  // namespace porta::graph_gen
