// porta-run --backward's graph (tools/porta-run/backward.hpp): gradients for the float inputs and
// initializers only; the integer and bool ones, and integer outputs, are skipped and named.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "backward.hpp"
#include "test_util.hpp"

namespace porta::test {

TEST_SUITE("npy") {
  TEST_CASE("porta-run --backward: NAME.grad for float inputs and initializers, the integer ones skipped") {
    Graph g;
    const Tensor x = g.input("x", {3});
    const Tensor ids = g.input("ids", {3}, DType::i64);
    const std::vector<std::int32_t> k_values = {1, 2, 3};
    const Tensor k = g.constant_bytes("k", {3}, DType::i32, std::as_bytes(std::span(k_values)));
    const Tensor y = g.add(g.mul(x, g.cast(k, DType::f32)), g.cast(ids, DType::f32));
    g.output("y", y);
    g.output("ids.twice", g.cast(g.cast(y, DType::i64), DType::i32));
    const cli::Backward backward = cli::append_backward(g);
    CHECK(backward.seeded == std::vector<std::string>{"y"});
    std::vector<std::string> skipped;
    for (const cli::Skipped& t : backward.skipped) skipped.push_back(t.name + (t.output ? " (output)" : ""));
    CHECK(skipped == std::vector<std::string>{"ids", "k", "ids.twice (output)"});
    const auto& outputs = g.outputs();
    const auto has = [&](const std::string& name) {
      return std::any_of(outputs.begin(), outputs.end(), [&](const auto& o) { return o.first == name; });
    };
    CHECK(has("x.grad"));
    CHECK_FALSE(has("ids.grad"));
    CHECK_FALSE(has("k.grad"));
    Executable exe = Device::open("ref").compile(g);
    exe.set_input("x", std::vector<float>{0.5f, -1.0f, 2.0f});
    const std::vector<std::int64_t> id_values = {1, 4, 9};
    exe.set_input_bytes("ids", std::as_bytes(std::span(id_values)));
    exe.set_input(cli::seed_name("y"), std::vector<float>{1.0f, 10.0f, 100.0f});
    exe.run();
    CHECK(exe.output("x.grad") == std::vector<float>{1.0f, 20.0f, 300.0f});  // seed * k

    Graph integer_only;
    integer_only.output("n", integer_only.cast(integer_only.input("ids", {2}, DType::i64), DType::i32));
    check_error([&] { cli::append_backward(integer_only); }, ErrorCode::InvalidArgument, {"no float output"});
  }
}

}  // namespace porta::test
