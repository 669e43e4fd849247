// Variables (Graph::variable, Graph::assign): state kept on the device across runs and updated in
// place, or through a copy where a later node still reads the old value; on ref and every device.
#include <doctest/doctest.h>

#include <string>

#include "core/compile/compile.hpp"
#include "core/runtime/backend.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

// counter += step, but `late` reads the counter after its new value is made, so the new value
// needs a copy; mirror = 2 * counter + 0 * mirror is written in place (its last reader makes it);
// `frozen` is never assigned.
Graph counter_graph() {
  Graph g;
  const Tensor step = g.input("step", {2, 3});
  const Tensor counter = g.variable("counter", {2, 3});
  const Tensor mirror = g.variable("mirror", {2, 3}, std::vector<float>(6, 5.0f));
  const Tensor frozen = g.variable("frozen", {3}, std::vector<float>{1, 2, 3});
  const Tensor next = g.add(counter, step);
  g.assign(counter, next);
  const Tensor late = g.mul(counter, g.constant("two", {1}, std::vector<float>{2.0f}));
  g.assign(mirror, g.add(late, g.mul(mirror, g.constant("zero", {1}, std::vector<float>{0.0f}))));
  g.output("seen", g.add(late, frozen));  // the old counter, twice, plus frozen
  return g;
}

}  // namespace

TEST_SUITE("autodiff") {
  TEST_CASE("variables: kept across runs, read as they were when the run began, set and read from the host") {
    const Graph g = counter_graph();
    for (const Device& device : ref_and_devices_under_test()) {
      INFO("device " << device.info().spec);
      Executable exe = device.compile(g, options_under_test());
      CHECK(exe.variable_names() == std::vector<std::string>{"counter", "mirror", "frozen"});
      CHECK(exe.variable("mirror") == std::vector<float>(6, 5.0f));
      exe.set_input("step", std::vector<float>{1, 2, 3, 4, 5, 6});
      for (int run = 1; run <= 3; ++run) {
        exe.run();
        const std::vector<float> counter = exe.variable("counter"), mirror = exe.variable("mirror");
        const std::vector<float> seen = exe.output("seen");
        for (std::size_t i = 0; i < 6; ++i) {
          const float step = static_cast<float>(i + 1);
          CHECK(counter[i] == step * static_cast<float>(run));
          CHECK(mirror[i] == 2.0f * step * static_cast<float>(run - 1));
          CHECK(seen[i] == 2.0f * step * static_cast<float>(run - 1) + static_cast<float>(i % 3 + 1));
        }
      }
      exe.set_variable("counter", std::vector<float>(6, -1.0f));
      exe.run();
      CHECK(exe.variable("counter") == std::vector<float>{0, 1, 2, 3, 4, 5});
      CHECK(exe.variable("frozen") == std::vector<float>{1, 2, 3});
      check_error([&] { (void)exe.variable("nope"); }, ErrorCode::NotFound, {"no variable named 'nope'", "counter"});
      check_error([&] { exe.set_variable("frozen", std::vector<float>(2)); }, ErrorCode::ShapeMismatch,
                  {"variable 'frozen'", "needs 3"});
    }
  }

  TEST_CASE("variables: the compiler writes a new value in place where no later node reads the old one") {
    const Graph g = counter_graph();
    const detail::DeviceSpec spec = detail::parse_device_spec("ref");
    const auto compiled = detail::compile_graph(g, *detail::find_backend(spec).open(spec), {});
    REQUIRE(compiled->writes.size() == 2);
    const auto name_of = [&](Tensor t) { return compiled->graph.info(t).name; };
    CHECK(name_of(compiled->writes[0].variable) == "counter");
    CHECK(name_of(compiled->writes[0].value) == "counter/assign");  // the copy, as the run's last node
    CHECK(compiled->order.back() == compiled->graph.info(compiled->writes[0].value).producer);
    CHECK(name_of(compiled->writes[1].variable) == "mirror");
    const Node& adds = compiled->graph.nodes()[static_cast<std::size_t>(compiled->graph.info(compiled->writes[1].value).producer)];
    CHECK(adds.op == OpKind::Add);  // in place: the add writes the variable
    for (const auto& w : compiled->writes)
      CHECK(compiled->plan.offset[static_cast<std::size_t>(w.value.id)] ==
            compiled->plan.offset[static_cast<std::size_t>(w.variable.id)]);
  }

  TEST_CASE("variables: bad assignments are refused with the reason") {
    Graph g;
    const Tensor v = g.variable("v", {3}), w = g.variable("w", {2}), x = g.input("x", {3});
    check_error([&] { g.assign(x, v); }, ErrorCode::InvalidArgument, {"'x'", "is not a variable"});
    check_error([&] { g.assign(v, g.variable("u", {3})); }, ErrorCode::InvalidArgument, {"the variable 'u' itself"});
    check_error([&] { g.assign(w, g.relu(x)); }, ErrorCode::ShapeMismatch, {"'w'", "[2]", "[3]"});
    g.assign(v, g.relu(x));
    check_error([&] { g.assign(v, g.relu(x)); }, ErrorCode::InvalidArgument, {"already has a new value"});
    check_error([&] { (void)g.variable("y", {2}, std::vector<float>{1, 2, 3}); }, ErrorCode::ShapeMismatch,
                {"needs 2 initial values, got 3"});
  }
}

}  // namespace porta::test
