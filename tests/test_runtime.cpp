// The runtime: device specs, the executable API, profiling, planned memory, hashing, determinism
// of the cpu backend and concurrent runs.
#include <doctest/doctest.h>

#include <cstring>
#include <thread>

#include "core/runtime/backend.hpp"
#include "op_cases/verify.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

using E = ErrorCode;

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

// Every tensor in its own allocation, with the largest alignment any backend asks for.
std::uint64_t naive_bytes(const Graph& g) {
  std::uint64_t total = 0;
  for (const TensorInfo& t : g.tensors()) total += align_up(t.desc.bytes(), 256);
  return total;
}

// A conv + gemm graph large enough that the cpu backend splits the work across threads.
Graph conv_gemm_graph(std::uint64_t seed) {
  Graph g;
  const Tensor x = g.input("x", {2, 16, 20, 20});
  const Tensor w = g.constant("w", {32, 16, 3, 3}, cases::random_values(32 * 16 * 9, seed), DType::f32);
  const Tensor b = g.constant("b", {32}, cases::random_values(32, seed + 1), DType::f32);
  Tensor y = g.conv2d(x, w, {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .activation = Activation::Relu}, b);
  y = g.flatten(y);  // [2, 3200]
  const Tensor fc = g.constant("fc", {3200, 129}, cases::random_values(3200 * 129, seed + 2), DType::f32);
  g.output("logits", g.gemm(y, fc, {.alpha = 0.5f}, g.constant("c", {129}, cases::random_values(129, seed + 3))));
  g.output("features", y);
  return g;
}

std::vector<std::byte> run_bytes(const Device& device, const Graph& g, std::string_view output) {
  Executable exe = device.compile(g, {.poison_memory = true});
  cases::set_random_inputs(exe, g, 99);
  exe.run();
  return exe.output_bytes(output);
}

}  // namespace

TEST_SUITE("runtime") {
  TEST_CASE("device specs parse into backend, index and options") {
    using detail::parse_device_spec;
    const auto cpu = parse_device_spec("cpu");
    CHECK(cpu.backend == "cpu");
    CHECK(cpu.index == 0);
    CHECK(cpu.options.empty());
    CHECK(cpu.text == "cpu");
    CHECK(parse_device_spec("opencl:1").index == 1);
    const auto threads = parse_device_spec("cpu:threads=2");
    REQUIRE(threads.option("threads") != nullptr);
    CHECK(*threads.option("threads") == "2");
    CHECK(threads.option("color") == nullptr);
    const auto full = parse_device_spec("cuda:3:a=1,b=two");
    CHECK(full.backend == "cuda");
    CHECK(full.index == 3);
    REQUIRE(full.options.size() == 2);
    CHECK(*full.option("b") == "two");
    for (const std::string bad :
         {"", ":0", "cpu:", "cpu::", "cpu:-1", "cpu:1:2", "cpu:x", "cpu:=3", "cpu:a=", "cpu:a=1,,b=2"}) {
      CAPTURE(bad);
      check_error([&] { parse_device_spec(bad); }, E::InvalidArgument, {"device spec", "expected backend"});
    }
  }

  TEST_CASE("devices and backends: ref first, cpu always, ref not a device under test") {
    const auto list = backends();
    REQUIRE(list.size() >= 2);
    CHECK(list[0].name == "ref");
    CHECK(list[1].name == "cpu");
    for (const auto& b : list) CHECK((!b.devices.empty() || !b.reason.empty()));  // absent devices say why
    bool cpu_found = false;
    for (const DeviceInfo& d : devices()) {
      CHECK(d.backend != "ref");
      cpu_found = cpu_found || d.backend == "cpu";
    }
    CHECK(cpu_found);
    const Device one = Device::open("cpu:threads=1");
    CHECK(one.info().threads == 1);
    CHECK(one.info().spec == "cpu:threads=1");
    CHECK(Device::open("cpu").info().threads >= 1);
    // The cache sizes the cpu device blocks for, from the smallest level up (porta-bench records them).
    CHECK(one.info().cache_l1 > 0);
    CHECK(one.info().cache_l2 >= one.info().cache_l1);
    CHECK(one.info().cache_l3 > 0);
    CHECK(Device::open("ref").info().cache_l1 == 0);
    CHECK(Device::open("ref").info().backend == "ref");
  }

  TEST_CASE("set_input, run and output round trip in every dtype") {
    for (const DType t : all_dtypes) {
      const std::string dtype_name(to_string(t));
      CAPTURE(dtype_name);
      Graph g;
      const Tensor x = g.input("x", {2, 3}, t);
      const float two[] = {2.0f};
      const Tensor k = g.constant("two", {1}, two, t);
      g.output("y", g.mul(x, k));
      g.output("x_again", x);  // an input and a constant can be outputs too
      g.output("k", k);
      for (const std::string spec : {"ref", "cpu"}) {
        CAPTURE(spec);
        Executable exe = Device::open(spec).compile(g, {.poison_memory = true});
        CHECK(exe.input_desc("x") == TensorDesc{t, {2, 3}});
        CHECK(exe.output_desc("y") == TensorDesc{t, {2, 3}});
        CHECK(exe.device().spec == spec);
        for (const float scale : {1.0f, -0.5f}) {  // a second run sees new inputs
          const std::vector<float> values{1 * scale, 2 * scale, 3 * scale, 0.25f * scale, 8 * scale, 100 * scale};
          exe.set_input("x", values);
          exe.run();
          const std::vector<float> y = exe.output("y");
          REQUIRE(y.size() == 6);
          for (std::size_t i = 0; i < 6; ++i) CHECK(y[i] == 2 * values[i]);  // exact in every dtype
          CHECK(exe.output("x_again") == values);
          CHECK(exe.output("k") == std::vector<float>{2.0f});
          CHECK(exe.output_bytes("y").size() == 6 * size_of(t));
        }
        // Bytes in, bytes out: the storage dtype is passed through untouched.
        std::vector<std::byte> raw(6 * size_of(t));
        for (std::size_t i = 0; i < 6; ++i) store_from_f32(raw.data(), i, t, static_cast<float>(i) - 2.5f);
        exe.set_input_bytes("x", raw);
        exe.run();
        CHECK(exe.output_bytes("x_again") == raw);
        CHECK(exe.output("y")[5] == 5.0f);
      }
    }
  }

  TEST_CASE("strided inputs: a transposed view and a sliced view") {
    Graph g;
    const Tensor t = g.input("t", {3, 4}, DType::f32, {1, 3});  // the transpose of a [4, 3] buffer
    const Tensor s = g.input("s", {2, 3}, DType::f16, {8, 2});  // every other column of two rows of 8
    g.output("t_dense", g.relu(t));
    g.output("s_dense", g.relu(s));
    std::vector<float> buffer_t(12), buffer_s(16);
    for (std::size_t i = 0; i < buffer_t.size(); ++i) buffer_t[i] = static_cast<float>(i + 1);
    for (std::size_t i = 0; i < buffer_s.size(); ++i) buffer_s[i] = static_cast<float>(i + 1);
    for (const std::string spec : {"ref", "cpu"}) {
      CAPTURE(spec);
      Executable exe = Device::open(spec).compile(g, {.poison_memory = true});
      exe.set_input("t", buffer_t);
      exe.set_input("s", buffer_s);  // a buffer larger than the view's extent (13) is fine
      exe.run();
      const auto dense_t = exe.output("t_dense"), dense_s = exe.output("s_dense");
      for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 4; ++j) CHECK(dense_t[i * 4 + j] == buffer_t[j * 3 + i]);
      for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t j = 0; j < 3; ++j) CHECK(dense_s[i * 3 + j] == buffer_s[i * 8 + j * 2]);
      const std::vector<float> short_buffer(12, 1.0f);
      check_error([&] { exe.set_input("s", short_buffer); }, E::ShapeMismatch, {"'s'", "at least 13", "[8, 2]"});
    }
  }

  TEST_CASE("node_timings: one per node in execution order, only with profile") {
    const Graph g = conv_gemm_graph(1);
    const Device cpu = Device::open("cpu");
    Executable plain = cpu.compile(g);
    cases::set_random_inputs(plain, g, 1);
    plain.run();
    CHECK(plain.node_timings().empty());

    // As built: the cpu's layout pass would add transposes of its own.
    Executable profiled = cpu.compile(g, {.profile = true, .layout = Layout::NCHW});
    cases::set_random_inputs(profiled, g, 1);
    profiled.run();
    const auto timings = profiled.node_timings();
    REQUIRE(timings.size() == g.nodes().size());
    double total = 0.0;
    for (std::size_t i = 0; i < timings.size(); ++i) {
      CHECK(timings[i].name == g.nodes()[i].name);
      CHECK(timings[i].op == g.nodes()[i].op);
      CHECK(timings[i].seconds >= 0.0);
      total += timings[i].seconds;
    }
    CHECK(total > 0.0);
    CHECK(timings[0].op == OpKind::Conv2d);
  }

  TEST_CASE("node_plans: what each node's kernels chose, recorded on the first run") {
    const Graph g = conv_gemm_graph(1);
    Executable cpu = Device::open("cpu:threads=2").compile(g);
    CHECK(cpu.node_plans().empty());
    cases::set_random_inputs(cpu, g, 1);
    cpu.run();
    const std::vector<NodePlan> plans = cpu.node_plans();
    std::string conv, gemm;
    for (const NodePlan& p : plans) {
      if (p.op == OpKind::Conv2d) conv = p.plan;
      if (p.op == OpKind::Gemm) gemm = p.plan;
      if (p.op == OpKind::Reshape || p.op == OpKind::Transpose) CHECK(p.plan.empty());
    }
    CHECK(conv.starts_with("conv "));
    CHECK(gemm.starts_with("gemm "));
    CHECK(gemm.find("threads=") != std::string::npos);
    cpu.run();
    CHECK(cpu.node_plans()[0].plan == plans[0].plan);  // kept from the first run

    // ref makes no plans: every node's is empty, never made up.
    Executable ref = Device::open("ref").compile(g);
    cases::set_random_inputs(ref, g, 1);
    ref.run();
    REQUIRE(ref.node_plans().size() == g.nodes().size());
    for (const NodePlan& p : ref.node_plans()) CHECK(p.plan.empty());
  }

  TEST_CASE("last_run_time: host-measured on the host backends, inside the host's wall time") {
    const Graph g = conv_gemm_graph(1);
    for (const char* spec : {"ref", "cpu", "cpu:threads=1"}) {
      CAPTURE(spec);
      Executable exe = Device::open(spec).compile(g);
      cases::set_random_inputs(exe, g, 1);
      check_run_times(exe, RunClock::Host);
    }
  }

  TEST_CASE("planned_peak_bytes: known before the first run, positive, at most the naive sum") {
    const Graph g = conv_gemm_graph(1);
    for (const std::string spec : {"ref", "cpu"}) {
      CAPTURE(spec);
      // As built: layout conversions would add tensors that the graph does not have.
      const Executable exe = Device::open(spec).compile(g, {.layout = Layout::NCHW});
      CHECK(exe.planned_peak_bytes() > 0);
      CHECK(exe.planned_peak_bytes() <= naive_bytes(g));
    }
    // A chain of 40 ops on a 64 KiB tensor plans about three tensors, not forty.
    Graph chain;
    Tensor x = chain.input("x", {16384});
    for (int i = 0; i < 40; ++i) x = i % 2 ? chain.sigmoid(x) : chain.tanh(x);
    chain.output("y", x);
    const auto peak = Device::open("cpu").compile(chain).planned_peak_bytes();
    CHECK(peak >= 2 * 65536);
    CHECK(peak <= 3 * 65536 + 3 * 256);
  }

  TEST_CASE("graph_hash: structural, not a function of the weights") {
    const auto hash = [](const Graph& g) { return Device::open("ref").compile(g).graph_hash(); };
    const auto net = [](Shape x, std::int64_t stride, std::uint64_t seed) {
      Graph g;
      const Tensor w = g.constant("w", {4, 3, 3, 3}, cases::random_values(108, seed));
      g.output("y", g.conv2d(g.input("x", x), w, {.stride = {stride, stride}}));
      return g;
    };
    const std::uint64_t base = hash(net({1, 3, 9, 9}, 1, 1));
    CHECK(base == hash(net({1, 3, 9, 9}, 1, 2)));  // other weights
    CHECK(base != hash(net({1, 3, 9, 10}, 1, 1)));  // another shape
    CHECK(base != hash(net({1, 3, 9, 9}, 2, 1)));   // another parameter
    const Graph g = net({1, 3, 9, 9}, 1, 1);
    // The same on every device that keeps the graph's layout (the compiled graph is hashed).
    CHECK(Device::open("cpu").compile(g, {.layout = Layout::NCHW}).graph_hash() == base);
    CHECK(Device::open("cpu").compile(g).graph_hash() != base);  // the cpu moves convs to NHWC
  }

  TEST_CASE("graph_hash: two graphs that differ only in their assignments hash differently") {
    // u and v each take one of a and b after the run: swapped, the same nodes compute other state.
    const auto net = [](bool swapped) {
      Graph g;
      const Tensor u = g.variable("u", {4}), v = g.variable("v", {4}), x = g.input("x", {4});
      const Tensor a = g.add(u, x), b = g.mul(v, x);
      g.output("a", a);
      g.output("b", b);
      g.assign(u, swapped ? b : a);
      g.assign(v, swapped ? a : b);
      return g;
    };
    const Device ref = Device::open("ref");
    CHECK(ref.compile(net(false)).graph_hash() == ref.compile(net(false)).graph_hash());
    CHECK(ref.compile(net(false)).graph_hash() != ref.compile(net(true)).graph_hash());
    Graph unassigned;
    unassigned.output("y", unassigned.add(unassigned.variable("u", {4}), unassigned.input("x", {4})));
    Graph assigned;
    const Tensor u = assigned.variable("u", {4});
    const Tensor y = assigned.add(u, assigned.input("x", {4}));
    assigned.output("y", y);
    assigned.assign(u, y);
    CHECK(ref.compile(unassigned).graph_hash() != ref.compile(assigned).graph_hash());
  }

  TEST_CASE("cpu results are bitwise identical run to run and across thread counts") {
    const Graph g = conv_gemm_graph(7);
    const Device cpu = Device::open("cpu"), one = Device::open("cpu:threads=1"), two = Device::open("cpu:threads=2");
    for (const std::string output : {"logits", "features"}) {
      CAPTURE(output);
      const auto first = run_bytes(cpu, g, output);
      CHECK(first == run_bytes(cpu, g, output));
      CHECK(first == run_bytes(one, g, output));
      CHECK(first == run_bytes(two, g, output));
    }
    // And repeated runs of one executable agree too.
    Executable exe = two.compile(g, {.poison_memory = true});
    cases::set_random_inputs(exe, g, 99);
    exe.run();
    const auto once = exe.output_bytes("logits");
    exe.run();
    CHECK(exe.output_bytes("logits") == once);
    CHECK(once == run_bytes(one, g, "logits"));
    // Sanity: it is also the right answer.
    const auto v = cases::verify_against_ref(g, two, OpKind::Gemm, 5);
    CHECK_MESSAGE(v.passed, v.detail);
  }

  TEST_CASE("several threads may call run() on one executable") {
    const Graph g = conv_gemm_graph(3);
    Executable exe = Device::open("cpu:threads=2").compile(g, {.poison_memory = true});
    cases::set_random_inputs(exe, g, 4);
    exe.run();
    const std::vector<float> expected = exe.output("logits");
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < mismatches.size(); ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < 8; ++i) {
          exe.run();
          if (exe.output("logits") != expected) ++mismatches[t];
        }
      });
    for (auto& thread : threads) thread.join();
    for (const int m : mismatches) CHECK(m == 0);
  }

  TEST_CASE("a device that cannot run a node refuses the graph and lists every such node") {
    Graph g;
    g.output("y", g.relu(g.sigmoid(g.input("x", {4}), "first"), "second"));
    const Device ref = Device::open("ref");
    const CompileOptions vendor{.impl = Impl::Vendor};  // the reference has no vendor library provider
    for (const Node& node : g.nodes()) CHECK_FALSE(ref.unsupported_reason(g, node, vendor).empty());
    for (const Node& node : g.nodes()) CHECK(ref.unsupported_reason(g, node).empty());
    check_error([&] { ref.compile(g, vendor); }, E::Unsupported, {"2 node(s)", "'first'", "'second'"});
  }
}

}  // namespace porta::test
