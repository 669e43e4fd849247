// Random whole graphs (tests/graph_gen) built from the fuzz bytes, each checked against ref without the
// compile passes: on ref with them, and on cpu:threads=1 with them off and on. A mismatch prints the
// graph, shrunk, as builder code to paste into a test, and traps.
#include <cstdio>

#include "graph_gen/differential.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace porta;
  static const std::vector<Device> devices{Device::open("cpu:threads=1")};
  graph_gen::ByteChoices choices({data, size});
  const graph_gen::Recipe recipe = graph_gen::generate(choices);
  const auto built = graph_gen::build(recipe);
  if (!built) {
    std::fprintf(stderr, "graph_diff: a generated recipe does not build\n");
    __builtin_trap();
  }
  const graph_gen::CheckOutcome outcome = graph_gen::check_graph(built->graph, devices, recipe.input_seed);
  if (outcome.mismatches.empty()) return 0;
  std::fprintf(stderr, "%s\n", graph_gen::shrunk_failure(recipe, devices, outcome.mismatches.front()).c_str());
  __builtin_trap();
}
