#pragma once
// Memory planning: every activation gets an offset in one arena, so that tensors whose lifetimes
// overlap never share bytes and the peak is known before anything is allocated.
#include <cstdint>
#include <span>
#include <vector>

#include "core/runtime/backend.hpp"

namespace porta::detail {

// A tensor's size and the inclusive range of execution steps during which it must stay intact.
struct LiveRange {
  std::uint64_t bytes = 0;
  std::int32_t first = 0;
  std::int32_t last = 0;
};

struct Placement {
  std::vector<std::uint64_t> offsets;  // one per range, multiples of the alignment
  std::uint64_t peak = 0;              // arena size
};

// Best fit, largest tensors first: each tensor takes the smallest gap between the tensors already
// placed that overlap it in time, or goes on top of them.
Placement place_best_fit(std::span<const LiveRange> ranges, std::uint64_t alignment);

// Whether every backend's kernel for `op` reads an element before it writes the same element of
// its output, so that the output may overwrite an input of its size (the elementwise ops).
bool reads_before_writing(OpKind op);

// Lifetimes of the graph's activations in `order`: graph inputs and variables live for the whole
// run (a caller may set them once and run many times), outputs from their producer to the end.
// With `in_place`, an elementwise node or a reshape writes its output over an intermediate input of
// the same size that it reads last. Each of `writes` stores its value in its variable's bytes
// (lower_assignments made that safe).
MemoryPlan plan_memory(const Graph& graph, std::span<const std::int32_t> order, std::uint64_t alignment,
                       bool in_place = false, std::span<const VariableWrite> writes = {});

}  // namespace porta::detail
