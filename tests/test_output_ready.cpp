// RunOptions::output_ready: every output reported once during the run, in an order the graph
// allows, with the bytes it holds when the run ends; on ref and every device under test (CUDA and HIP
// report at the end of the run, tests/test_gpu_emulated.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "op_cases/verify.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

// A chain a -> b -> c of outputs, one output beside it (`side`), and the input `x` as an output,
// which no node makes.
Graph chain_graph() {
  Graph g;
  const Tensor x = g.input("x", {8, 16});
  const Tensor w = g.constant("w", {16, 12}, cases::random_values(16 * 12, 7), DType::f32);
  const Tensor a = g.relu(x);
  const Tensor b = g.matmul(a, w);
  g.output("b", b);
  g.output("a", a);
  g.output("c", g.sigmoid(g.add(b, b)));
  g.output("side", g.mul(x, x));
  g.output("x", x);
  return g;
}

}  // namespace

TEST_CASE("output_ready: each output once, after what it depends on, its bytes final") {
  const Graph g = chain_graph();
  for (const Device& device : ref_and_devices_under_test()) {
    INFO("device " << device.info().spec);
    Executable exe = device.compile(g, options_under_test());
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::byte>> seen;
    const RunOptions options{.output_ready = [&](std::string_view name, std::span<const std::byte> bytes) {
      order.emplace_back(name);
      seen[std::string(name)].assign(bytes.begin(), bytes.end());
    }};
    for (int run = 0; run < 2; ++run) {  // a second run reports afresh, from new inputs
      order.clear();
      exe.set_input("x", cases::random_values(8 * 16, 11 + static_cast<std::uint64_t>(run)));
      exe.run(options);
      REQUIRE(order.size() == 5);
      for (const std::string name : {"a", "b", "c", "side", "x"}) {
        CHECK(std::count(order.begin(), order.end(), name) == 1);
        CHECK(seen[name] == exe.output_bytes(name));
      }
      const auto at = [&](const char* name) { return std::find(order.begin(), order.end(), name) - order.begin(); };
      CHECK(at("a") < at("b"));
      CHECK(at("b") < at("c"));
      CHECK(order.back() == "x");  // no node makes it: reported at the end
    }
    // A callback's exception ends the run and reaches the caller; the executable runs on.
    const RunOptions throwing{.output_ready = [](std::string_view, std::span<const std::byte>) {
      throw Error(ErrorCode::Internal, "from the callback");
    }};
    CHECK_THROWS_WITH_AS(exe.run(throwing), doctest::Contains("from the callback"), Error);
    exe.run();
    CHECK(exe.output_bytes("x").size() == 8 * 16 * sizeof(float));
  }
}

}  // namespace porta::test
