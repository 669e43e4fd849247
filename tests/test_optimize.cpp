// The compiler's graph passes: batchnorm folding, epilogue fusion, silu and GELU matching and in-place
// memory reuse. Each is checked twice: the compiled graph has the expected nodes (through the
// per-node profile), and its outputs match the unoptimised graph's on ref.
#include <doctest/doctest.h>

#include <algorithm>

#include "op_cases/verify.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

Tensor weights(Graph& g, const std::string& name, const Shape& shape, std::uint64_t seed, float lo = -1.0f,
               float hi = 1.0f, DType dtype = DType::f32) {
  std::int64_t n = 1;
  for (const auto d : shape) n *= d;
  return g.constant(name, shape, cases::random_values(static_cast<std::size_t>(n), seed, lo, hi), dtype);
}

Tensor conv_bn(Graph& g, Tensor x, std::int64_t filters, const std::string& name, std::uint64_t seed) {
  const std::int64_t c = g.shape(x)[1];
  const Tensor y = g.conv2d(x, weights(g, name + ".w", {filters, c, 3, 3}, seed, -0.3f, 0.3f), {.pad = {1, 1, 1, 1}},
                            {}, name);
  return g.batchnorm(y, weights(g, name + ".scale", {filters}, seed + 1, 0.5f, 1.5f),
                     weights(g, name + ".bias", {filters}, seed + 2), weights(g, name + ".mean", {filters}, seed + 3),
                     weights(g, name + ".var", {filters}, seed + 4, 0.5f, 2.0f), {}, name + ".bn");
}

// A residual block: relu(bn(conv(relu(bn(conv(x))))) + x), then x * sigmoid(x) as ONNX spells silu.
Graph residual_block() {
  Graph g;
  const Tensor x = g.input("x", {2, 8, 9, 7});
  Tensor y = g.relu(conv_bn(g, x, 8, "conv1", 10));
  y = g.relu(g.add(conv_bn(g, y, 8, "conv2", 20), x));
  g.output("y", g.mul(y, g.sigmoid(y)));
  return g;
}

// The fusion tests keep the graph's layout, so that the node lists hold no layout conversions
// (test_layout.cpp covers those).
const CompileOptions nchw{.layout = Layout::NCHW};

std::vector<OpKind> compiled_ops(const Device& device, const Graph& g, const CompileOptions& options = {}) {
  CompileOptions o = options;
  o.profile = true;
  Executable exe = device.compile(g, o);
  cases::set_random_inputs(exe, g, 1);
  exe.run();
  std::vector<OpKind> ops;
  for (const NodeTiming& t : exe.node_timings()) ops.push_back(t.op);
  return ops;
}

std::vector<float> run(const Device& device, const Graph& g, const CompileOptions& options, std::string_view out) {
  Executable exe = device.compile(g, options);
  cases::set_random_inputs(exe, g, 7);
  exe.run();
  return exe.output(out);
}

void check_matches_unoptimised(const Device& device, const Graph& g, const std::string& out) {
  const std::vector<float> want = run(Device::open("ref"), g, {.optimize = false}, out);
  const cases::Comparison c = cases::compare(run(device, g, {}, out), want);
  CHECK_MESSAGE(c.nmse < 1e-10, device.info().spec << ": nmse " << c.nmse);
  CHECK(c.non_finite == 0);
}

TEST_CASE("batchnorm folds and the residual, activation and silu fuse into the convs") {
  const Graph g = residual_block();
  const Device cpu = Device::open("cpu");
  CHECK(compiled_ops(cpu, g, {.optimize = false}).size() == 9);
  // conv1+bn+relu, conv2+bn+add+relu, silu.
  CHECK(compiled_ops(cpu, g, nchw) == std::vector<OpKind>{OpKind::Conv2d, OpKind::Conv2d, OpKind::Silu});
  for (const DeviceInfo& d : devices()) check_matches_unoptimised(Device::open(d.spec), g, "y");
  check_matches_unoptimised(Device::open("ref"), g, "y");
}

TEST_CASE("a device that rejects a fused node gets the nodes unfused") {
  // oneDNN has no residual epilogue: the add stays, the relu after it too (it applies after the add).
  const Graph g = residual_block();
  const Device cpu = Device::open("cpu");
  if (!cpu.unsupported_reason(g, g.nodes()[0], {.impl = Impl::Vendor}).empty()) return;  // built without oneDNN
  try {
    const auto ops = compiled_ops(cpu, g, {.impl = Impl::Vendor, .layout = Layout::NCHW});
    CHECK(ops == std::vector<OpKind>{OpKind::Conv2d, OpKind::Conv2d, OpKind::Add, OpKind::Relu, OpKind::Silu});
  } catch (const Error& e) {
    CHECK_MESSAGE(e.code() == ErrorCode::Unsupported, e.what());
  }
}

TEST_CASE("tensors that are outputs or read twice are not fused away") {
  Graph g;
  const Tensor x = g.input("x", {1, 4, 6, 6});
  const Tensor bn = conv_bn(g, x, 4, "conv", 30);
  g.output("bn", bn);                    // an output: must stay materialised
  const Tensor r = g.relu(bn);
  g.output("y", g.add(r, g.sigmoid(r)));  // r read twice: the sigmoid is not a silu of anything
  const Device cpu = Device::open("cpu");
  CHECK(compiled_ops(cpu, g, nchw) == std::vector<OpKind>{OpKind::Conv2d, OpKind::Relu, OpKind::Sigmoid, OpKind::Add});
  check_matches_unoptimised(cpu, g, "bn");
  check_matches_unoptimised(cpu, g, "y");
}

TEST_CASE("a conv built with a residual keeps it: an activation fuses, an add and a batchnorm do not") {
  // Found by the graph_builder fuzz target: the fused conv lost its own residual input.
  Graph g;
  const Tensor x = g.input("x", {2, 3, 6, 5}), skip = g.input("skip", {2, 4, 6, 5}), more = g.input("more", {2, 4, 6, 5});
  const Tensor conv = g.conv2d(x, weights(g, "w", {4, 3, 3, 3}, 50), {.pad = {1, 1, 1, 1}}, {}, "conv", skip);
  g.output("y", g.relu(conv));
  g.output("z", g.add(g.tanh(conv), more));
  const Device cpu = Device::open("cpu");
  CHECK(compiled_ops(cpu, g, nchw) == std::vector<OpKind>{OpKind::Conv2d, OpKind::Relu, OpKind::Tanh, OpKind::Add});
  Graph chain;
  const Tensor cx = chain.input("x", {2, 3, 6, 5}), cskip = chain.input("skip", {2, 4, 6, 5});
  const Tensor c = chain.conv2d(cx, weights(chain, "w", {4, 3, 3, 3}, 51), {.pad = {1, 1, 1, 1}}, {}, "conv", cskip);
  chain.output("y", chain.tanh(chain.add(c, chain.input("more", {2, 4, 6, 5}))));
  CHECK(compiled_ops(cpu, chain, nchw) == std::vector<OpKind>{OpKind::Conv2d, OpKind::Add, OpKind::Tanh});
  Graph activation;
  const Tensor ax = activation.input("x", {2, 3, 6, 5}), askip = activation.input("skip", {2, 4, 6, 5});
  activation.output("y", activation.relu(activation.conv2d(ax, weights(activation, "w", {4, 3, 3, 3}, 52),
                                                           {.pad = {1, 1, 1, 1}}, {}, "conv", askip)));
  CHECK(compiled_ops(cpu, activation, nchw) == std::vector<OpKind>{OpKind::Conv2d});
  for (const DeviceInfo& d : devices()) {
    const Device device = Device::open(d.spec);
    check_matches_unoptimised(device, g, "y");
    check_matches_unoptimised(device, g, "z");
    check_matches_unoptimised(device, chain, "y");
    check_matches_unoptimised(device, activation, "y");
  }
}

TEST_CASE("a gemm takes the activation after it") {
  Graph g;
  const Tensor x = g.input("x", {3, 17});
  const Tensor y = g.gemm(x, weights(g, "w", {17, 5}, 40), {}, weights(g, "b", {5}, 41));
  g.output("y", g.clip(y, 0.0f, 6.0f));
  const Device cpu = Device::open("cpu");
  CHECK(compiled_ops(cpu, g) == std::vector<OpKind>{OpKind::Gemm});
  check_matches_unoptimised(cpu, g, "y");
}

// 0.5 x (1 + erf(x / sqrt 2)) after a gemm, in one of the orders exporters write it.
enum class GeluSpelling { HalfFirst, HalfLast, ByReciprocal };
Graph spelled_gelu(GeluSpelling spelling, bool erf_read_twice = false, DType dtype = DType::f32) {
  Graph g;
  const Tensor x = g.gemm(g.input("a", {5, 19}, dtype), weights(g, "w", {19, 23}, 60, -2.0f, 2.0f, dtype), {},
                          weights(g, "b", {23}, 61, -2.0f, 2.0f, dtype));
  // In f16 and bf16 the constants are sqrt 2 and its inverse as those dtypes round them.
  const auto scalar = [&](const std::string& name, float v) {
    return g.constant(name, {1}, std::vector<float>{v}, dtype);
  };
  const Tensor scaled = spelling == GeluSpelling::ByReciprocal ? g.mul(scalar("r", 0.70710678f), x)
                                                               : g.div(x, scalar("sqrt2", 1.41421356f));
  const Tensor erf = g.erf(scaled);
  const Tensor one_plus = g.add(scalar("one", 1.0f), erf);
  const Tensor y = spelling == GeluSpelling::HalfFirst ? g.mul(g.mul(x, scalar("half", 0.5f)), one_plus)
                                                       : g.mul(g.mul(x, one_plus), scalar("half", 0.5f));
  g.output("y", erf_read_twice ? g.add(y, erf) : y);
  return g;
}

TEST_CASE("GELU spelt out with erf becomes one gelu, which the gemm before it takes") {
  const Device cpu = Device::open("cpu");
  for (const GeluSpelling spelling : {GeluSpelling::HalfFirst, GeluSpelling::HalfLast, GeluSpelling::ByReciprocal}) {
    CAPTURE(static_cast<int>(spelling));
    const Graph g = spelled_gelu(spelling);
    CHECK(compiled_ops(cpu, g) == std::vector<OpKind>{OpKind::Gemm});
    for (const DeviceInfo& d : devices()) check_matches_unoptimised(Device::open(d.spec), g, "y");
  }
  for (const DType dtype : {DType::f16, DType::bf16}) {
    CAPTURE(to_string(dtype));
    CHECK(compiled_ops(cpu, spelled_gelu(GeluSpelling::HalfFirst, false, dtype)) == std::vector<OpKind>{OpKind::Gemm});
  }
  // The erf is read by another node too: nothing fuses but the gemm's own nodes.
  const Graph shared = spelled_gelu(GeluSpelling::HalfFirst, true);
  CHECK(compiled_ops(cpu, shared) ==
        std::vector<OpKind>{OpKind::Gemm, OpKind::Div, OpKind::Erf, OpKind::Add, OpKind::Mul, OpKind::Mul, OpKind::Add});
  check_matches_unoptimised(cpu, shared, "y");
}

TEST_CASE("elementwise chains reuse their input's memory") {
  Graph g;
  Tensor y = g.input("x", {64, 1024});
  y = g.mul(y, weights(g, "s", {1024}, 50));  // the input itself is never overwritten
  for (int i = 0; i < 4; ++i) y = g.tanh(g.add(y, weights(g, std::string("b").append(std::to_string(i)), {1024}, 51 + i)));
  g.output("y", y);
  const Device cpu = Device::open("cpu");
  const MemoryEstimate unoptimised = cpu.estimate_memory(g, {.optimize = false});
  const MemoryEstimate optimised = cpu.estimate_memory(g);
  const std::uint64_t tensor = 64 * 1024 * 4;
  CHECK(unoptimised.arena_bytes >= 3 * tensor);  // input, and two intermediates alternating
  CHECK(optimised.arena_bytes == 2 * tensor);    // input, and one buffer written over and over
  CHECK(optimised.naive_arena_bytes == unoptimised.naive_arena_bytes);
  CHECK(optimised.constant_bytes == unoptimised.constant_bytes);
  // The input survives runs: a second run gives the same result.
  Executable exe = cpu.compile(g);
  cases::set_random_inputs(exe, g, 3);
  exe.run();
  const std::vector<float> first = exe.output("y");
  exe.run();
  CHECK(exe.output("y") == first);
  for (const DeviceInfo& d : devices()) check_matches_unoptimised(Device::open(d.spec), g, "y");
}

TEST_CASE("estimate_memory matches what compile plans") {
  const Graph g = residual_block();
  const Device cpu = Device::open("cpu");
  const MemoryEstimate e = cpu.estimate_memory(g);
  CHECK(cpu.compile(g).planned_peak_bytes() == e.peak_bytes());
  CHECK(e.arena_bytes <= e.naive_arena_bytes);
}

}  // namespace
}  // namespace porta::test
