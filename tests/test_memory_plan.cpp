// The memory planner: no two live tensors overlap, chains reuse memory, the peak never exceeds
// the naive sum.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "core/compile/memory_plan.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

using detail::LiveRange;

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

bool overlap(std::uint64_t a, std::uint64_t a_size, std::uint64_t b, std::uint64_t b_size) {
  return a < b + b_size && b < a + a_size;
}

// Checks a placement against its ranges; returns the naive arena (every range on its own).
std::uint64_t check_placement(std::span<const LiveRange> ranges, const detail::Placement& p, std::uint64_t alignment) {
  REQUIRE(p.offsets.size() == ranges.size());
  std::uint64_t naive = 0, top = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    CAPTURE(i);
    CHECK(p.offsets[i] % alignment == 0);
    naive += align_up(std::max<std::uint64_t>(ranges[i].bytes, 1), alignment);
    top = std::max(top, p.offsets[i] + ranges[i].bytes);
    for (std::size_t j = 0; j < i; ++j) {
      const bool together = ranges[i].first <= ranges[j].last && ranges[j].first <= ranges[i].last;
      if (!together) continue;
      CAPTURE(j);
      // Every tensor takes at least one byte, so even empty ones have distinct addresses.
      CHECK_FALSE(overlap(p.offsets[i], std::max<std::uint64_t>(ranges[i].bytes, 1), p.offsets[j],
                          std::max<std::uint64_t>(ranges[j].bytes, 1)));
    }
  }
  CHECK(p.peak >= top);
  CHECK(p.peak <= naive);
  return naive;
}

}  // namespace

TEST_SUITE("memory_plan") {
  TEST_CASE("place_best_fit: random lifetimes never share bytes and stay under the naive sum") {
    std::mt19937_64 rng(1234);
    for (int trial = 0; trial < 200; ++trial) {
      CAPTURE(trial);
      const int count = 1 + static_cast<int>(rng() % 40);
      const std::uint64_t alignment = std::uint64_t{1} << (rng() % 9);  // 1 .. 256
      std::vector<LiveRange> ranges;
      for (int i = 0; i < count; ++i) {
        const auto first = static_cast<std::int32_t>(rng() % 30);
        const auto last = first + static_cast<std::int32_t>(rng() % 8);
        // Mostly varied sizes, some zero-byte and some equal ones to exercise ties.
        const std::uint64_t bytes = rng() % 5 == 0 ? 4096 : rng() % 20 == 0 ? 0 : 1 + rng() % 10000;
        ranges.push_back({bytes, first, last});
      }
      const auto placement = detail::place_best_fit(ranges, alignment);
      check_placement(ranges, placement, alignment);
      // The peak is at least what is live at the busiest step.
      std::uint64_t busiest = 0;
      for (std::int32_t step = 0; step < 40; ++step) {
        std::uint64_t live = 0;
        for (const auto& r : ranges)
          if (r.first <= step && step <= r.last) live += r.bytes;
        busiest = std::max(busiest, live);
      }
      CHECK(placement.peak >= busiest);
    }
  }

  TEST_CASE("place_best_fit: a chain of 50 equal tensors needs two slots") {
    std::vector<LiveRange> chain;
    for (std::int32_t i = 0; i < 50; ++i) chain.push_back({1000, i, i + 1});  // produced at i, consumed at i + 1
    const auto placement = detail::place_best_fit(chain, 256);
    const std::uint64_t slot = 1024, naive = check_placement(chain, placement, 256);
    CHECK(naive == 50 * slot);
    CHECK(placement.peak >= 2 * slot);
    CHECK(placement.peak <= 3 * slot);
  }

  TEST_CASE("place_best_fit: disjoint lifetimes share one slot, simultaneous ones stack") {
    const LiveRange apart[] = {{100, 0, 0}, {200, 1, 1}, {50, 2, 2}};
    CHECK(detail::place_best_fit(apart, 64).peak == 256);
    const LiveRange together[] = {{100, 0, 2}, {200, 1, 1}, {50, 2, 2}};
    // Optimal: the 50-byte tensor fits beside the 100-byte one, in the 200-byte one's place.
    CHECK(detail::place_best_fit(together, 64).peak == 256 + 128);
    CHECK(detail::place_best_fit({}, 64).peak == 0);
  }

  TEST_CASE("plan_memory: a long chain of ops reuses memory") {
    Graph g;
    Tensor x = g.input("x", {1000});
    for (int i = 0; i < 50; ++i) x = g.relu(x);
    g.output("y", x);
    std::vector<std::int32_t> order(50);
    for (std::int32_t i = 0; i < 50; ++i) order[static_cast<std::size_t>(i)] = i;
    const auto plan = detail::plan_memory(g, order, 256);
    const std::uint64_t slot = 4096;  // 4000 bytes, aligned
    CHECK(plan.naive_arena_bytes == 51 * slot);
    CHECK(plan.arena_bytes <= 3 * slot);  // the input, and two tensors of the chain at a time
    CHECK(plan.arena_bytes >= 2 * slot);
  }

  TEST_CASE("plan_memory: inputs, outputs and intermediates of a real graph never overlap while live") {
    Graph g;
    const Tensor x = g.input("x", {2, 3, 8, 8}), skip = g.input("skip", {2, 4, 8, 8});
    const std::vector<float> w(4 * 3 * 9, 0.5f), b(4, 0.1f);
    Tensor y = g.conv2d(x, g.constant("w", {4, 3, 3, 3}, w), {.pad = {1, 1, 1, 1}}, g.constant("b", {4}, b));
    const Tensor early = g.relu(y);  // an output that later nodes also read
    y = g.add(early, skip);
    g.relu(y, "dead");  // no output needs it: never scheduled, never placed
    y = g.max_pool2d(g.sigmoid(y), {.kernel = {2, 2}, .stride = {2, 2}});
    const Tensor flat = g.flatten(y);
    const std::vector<float> fc(64 * 10, 0.01f);
    const Tensor logits = g.gemm(flat, g.constant("fc", {64, 10}, fc));
    g.output("features", early);
    g.output("probs", g.softmax(logits));
    g.output("input_too", x);

    std::vector<std::int32_t> order;  // every node but the dead one, in build order
    for (std::size_t i = 0; i < g.nodes().size(); ++i)
      if (g.nodes()[i].name != "dead") order.push_back(static_cast<std::int32_t>(i));
    const auto plan = detail::plan_memory(g, order, 64);
    const auto& tensors = g.tensors();
    REQUIRE(plan.offset.size() == tensors.size());

    // Lifetimes recomputed here: inputs for the whole run, outputs to the end, others to their last reader.
    const auto end = static_cast<std::int32_t>(order.size() - 1);
    std::vector<std::int32_t> first(tensors.size(), -1), last(tensors.size(), -1);
    for (std::size_t t = 0; t < tensors.size(); ++t)
      if (tensors[t].role == Role::Input) first[t] = 0, last[t] = end;
    for (std::int32_t step = 0; step <= end; ++step) {
      const Node& node = g.nodes()[static_cast<std::size_t>(order[static_cast<std::size_t>(step)])];
      first[static_cast<std::size_t>(node.output.id)] = last[static_cast<std::size_t>(node.output.id)] = step;
      for (const Tensor in : node.inputs) {
        const auto id = static_cast<std::size_t>(in.id);
        if (tensors[id].role == Role::Intermediate) last[id] = step;
      }
    }
    for (const auto& [name, t] : g.outputs()) last[static_cast<std::size_t>(t.id)] = end;

    std::uint64_t naive = 0;
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      CAPTURE(tensors[t].name);
      const bool constant = tensors[t].role == Role::Constant;
      CHECK((plan.constant_offset[t] >= 0) == constant);
      if (constant) continue;
      const bool scheduled = first[t] >= 0;
      CHECK((plan.offset[t] >= 0) == scheduled);  // the dead node's output has no place
      if (!scheduled) continue;
      CHECK(plan.offset[t] % 64 == 0);
      CHECK(static_cast<std::uint64_t>(plan.offset[t]) + tensors[t].desc.bytes() <= plan.arena_bytes);
      naive += align_up(tensors[t].desc.bytes(), 64);
      for (std::size_t u = 0; u < t; ++u) {
        if (plan.offset[u] < 0 || !(first[t] <= last[u] && first[u] <= last[t])) continue;
        CAPTURE(tensors[u].name);
        CHECK_FALSE(overlap(static_cast<std::uint64_t>(plan.offset[t]), tensors[t].desc.bytes(),
                            static_cast<std::uint64_t>(plan.offset[u]), tensors[u].desc.bytes()));
      }
    }
    CHECK(plan.naive_arena_bytes == naive);
    CHECK(plan.arena_bytes <= naive);
    CHECK(plan.arena_bytes < naive);  // this graph has tensors whose lifetimes do not meet
    CHECK(plan.constant_bytes >= (w.size() + b.size() + fc.size()) * 4);
  }
}

}  // namespace porta::test
