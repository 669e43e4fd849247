#include "core/compile/memory_plan.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "porta/error.hpp"

namespace porta::detail {
namespace {

std::uint64_t align_up(std::uint64_t bytes, std::uint64_t alignment) {
  if (bytes > std::numeric_limits<std::uint64_t>::max() - alignment)
    throw Error(ErrorCode::Overflow, "memory plan: a tensor of " + std::to_string(bytes) + " bytes cannot be aligned");
  return (bytes + alignment - 1) / alignment * alignment;
}

bool overlap_in_time(const LiveRange& a, const LiveRange& b) { return a.first <= b.last && b.first <= a.last; }

}  // namespace

bool reads_before_writing(OpKind op) {
  static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
  switch (op) {
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div:
    case OpKind::Relu: case OpKind::Clip: case OpKind::Sigmoid: case OpKind::Silu: case OpKind::Tanh:
    case OpKind::Gelu: case OpKind::BatchNorm:
    case OpKind::Erf: case OpKind::Sqrt: case OpKind::Reciprocal: case OpKind::HardSigmoid: case OpKind::HardSwish:
    case OpKind::Pow: case OpKind::ActivationBackward:
      return true;
    default:
      return false;
  }
}

Placement place_best_fit(std::span<const LiveRange> ranges, std::uint64_t alignment) {
  std::vector<std::size_t> by_size(ranges.size());
  std::iota(by_size.begin(), by_size.end(), 0);
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](std::size_t a, std::size_t b) { return ranges[a].bytes > ranges[b].bytes; });

  Placement result;
  result.offsets.assign(ranges.size(), 0);
  std::vector<std::size_t> placed;
  for (const std::size_t i : by_size) {
    const std::uint64_t size = align_up(std::max<std::uint64_t>(ranges[i].bytes, 1), alignment);
    std::vector<std::size_t> live;  // placed tensors that coexist with this one, by offset
    for (const std::size_t j : placed)
      if (overlap_in_time(ranges[i], ranges[j])) live.push_back(j);
    std::sort(live.begin(), live.end(), [&](std::size_t a, std::size_t b) { return result.offsets[a] < result.offsets[b]; });

    std::uint64_t best_offset = 0, best_gap = std::numeric_limits<std::uint64_t>::max(), end = 0;
    bool found = false;
    for (const std::size_t j : live) {
      const std::uint64_t gap = result.offsets[j] > end ? result.offsets[j] - end : 0;
      if (gap >= size && gap < best_gap) {
        best_offset = end, best_gap = gap, found = true;
      }
      end = std::max(end, result.offsets[j] + align_up(std::max<std::uint64_t>(ranges[j].bytes, 1), alignment));
    }
    result.offsets[i] = found ? best_offset : end;
    if (result.offsets[i] > std::numeric_limits<std::uint64_t>::max() - size)
      throw Error(ErrorCode::Overflow, "memory plan: the arena would exceed 2^64 bytes");
    result.peak = std::max(result.peak, result.offsets[i] + size);
    placed.push_back(i);
  }
  return result;
}

MemoryPlan plan_memory(const Graph& graph, std::span<const std::int32_t> order, std::uint64_t alignment,
                       bool in_place, std::span<const VariableWrite> writes) {
  const auto& tensors = graph.tensors();
  const auto last_step = static_cast<std::int32_t>(order.empty() ? 0 : order.size() - 1);
  constexpr std::int32_t unused = -1;
  std::vector<std::int32_t> first(tensors.size(), unused), last(tensors.size(), unused);
  std::vector<bool> read(tensors.size(), false);  // by a live node or as an output

  for (std::size_t t = 0; t < tensors.size(); ++t)
    if (tensors[t].role == Role::Input || tensors[t].role == Role::Variable) first[t] = 0, last[t] = last_step;
  for (std::int32_t step = 0; step <= last_step && !order.empty(); ++step) {
    const Node& node = graph.nodes()[static_cast<std::size_t>(order[static_cast<std::size_t>(step)])];
    first[static_cast<std::size_t>(node.output.id)] = last[static_cast<std::size_t>(node.output.id)] = step;
    for (const Tensor in : node.inputs)
      if (read[static_cast<std::size_t>(in.id)] = true; tensors[static_cast<std::size_t>(in.id)].role == Role::Intermediate)
        last[static_cast<std::size_t>(in.id)] = std::max(last[static_cast<std::size_t>(in.id)], step);
  }
  for (const auto& [name, t] : graph.outputs()) {
    read[static_cast<std::size_t>(t.id)] = true;
    if (tensors[static_cast<std::size_t>(t.id)].role != Role::Constant) last[static_cast<std::size_t>(t.id)] = last_step;
  }

  // storage[t]: the tensor whose bytes t lives in (itself unless it was written in place).
  std::vector<std::size_t> storage(tensors.size());
  std::iota(storage.begin(), storage.end(), std::size_t{0});
  std::vector<bool> is_output(tensors.size(), false);
  for (const auto& [name, t] : graph.outputs()) is_output[static_cast<std::size_t>(t.id)] = true;
  for (const VariableWrite& w : writes) {  // kept, like an output, in the variable's bytes
    storage[static_cast<std::size_t>(w.value.id)] = static_cast<std::size_t>(w.variable.id);
    is_output[static_cast<std::size_t>(w.value.id)] = true;
  }
  for (std::int32_t step = 0; in_place && step <= last_step && !order.empty(); ++step) {
    const Node& node = graph.nodes()[static_cast<std::size_t>(order[static_cast<std::size_t>(step)])];
    // A reshape's output is its input's bytes: over them, every backend copies nothing.
    if (!reads_before_writing(node.op) && node.op != OpKind::Reshape) continue;
    const auto out = static_cast<std::size_t>(node.output.id);
    if (storage[out] != out) continue;  // a variable's new value
    for (const Tensor in : node.inputs) {
      const auto i = static_cast<std::size_t>(in.id);
      if (tensors[i].role != Role::Intermediate || is_output[i] || last[i] != step ||
          tensors[i].desc.bytes() != tensors[out].desc.bytes())
        continue;
      storage[out] = storage[i];
      last[storage[i]] = last[out];
      break;
    }
  }

  MemoryPlan plan;
  plan.offset.assign(tensors.size(), -1);
  plan.constant_offset.assign(tensors.size(), -1);
  std::vector<LiveRange> ranges;
  std::vector<std::size_t> owner;  // tensor id of each range
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const std::uint64_t bytes = tensors[t].desc.bytes();
    if (tensors[t].role == Role::Constant) {
      if (!read[t]) continue;  // e.g. weights a fold replaced
      plan.constant_offset[t] = static_cast<std::int64_t>(plan.constant_bytes);
      plan.constant_bytes += align_up(bytes, alignment);
    } else if (first[t] != unused) {
      plan.naive_arena_bytes += align_up(bytes, alignment);
      if (storage[t] != t) continue;
      ranges.push_back({bytes, first[t], last[t]});
      owner.push_back(t);
    }
  }
  const Placement placement = place_best_fit(ranges, alignment);
  for (std::size_t i = 0; i < ranges.size(); ++i) plan.offset[owner[i]] = static_cast<std::int64_t>(placement.offsets[i]);
  for (std::size_t t = 0; t < tensors.size(); ++t)
    if (storage[t] != t) plan.offset[t] = plan.offset[storage[t]];
  plan.arena_bytes = placement.peak;
  return plan;
}

}  // namespace porta::detail
