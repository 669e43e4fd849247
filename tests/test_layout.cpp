// The layout pass: chains of convs and the ops between them move to NHWC where the device runs
// them so (or CompileOptions::layout asks), converting only at the chain's ends, and the results
// still match the graph as built.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/compile/layout.hpp"
#include "op_cases/verify.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

Tensor weights(Graph& g, const std::string& name, const Shape& shape, std::uint64_t seed) {
  std::int64_t n = 1;
  for (const auto d : shape) n *= d;
  return g.constant(name, shape, cases::random_values(static_cast<std::size_t>(n), seed, -0.4f, 0.4f));
}

// A small CNN with every kind of node the pass moves or stops at: a strided stem and max pool,
// a residual block, a squeeze-excite gate (global pool, 1x1 convs, broadcast multiply), a
// constant broadcast add, a depthwise conv, a 4-D output and a classifier head (reshape, gemm).
Graph small_cnn() {
  Graph g;
  const Tensor x = g.input("x", {2, 3, 13, 11});
  Tensor y = g.conv2d(x, weights(g, "stem.w", {8, 3, 3, 3}, 1), {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .activation = Activation::Relu},
                      weights(g, "stem.b", {8}, 2));
  y = g.max_pool2d(y, {.kernel = {3, 3}, .stride = {1, 1}, .pad = {1, 1, 1, 1}});
  const Tensor shortcut = y;
  y = g.relu(g.conv2d(y, weights(g, "a.w", {8, 8, 3, 3}, 3), {.pad = {1, 1, 1, 1}}));
  y = g.relu(g.add(g.conv2d(y, weights(g, "b.w", {8, 8, 3, 3}, 4), {.pad = {1, 1, 1, 1}}), shortcut));
  Tensor s = g.global_avg_pool(y);
  s = g.silu(g.conv2d(s, weights(g, "se1.w", {4, 8, 1, 1}, 5), {}, weights(g, "se1.b", {4}, 6)));
  s = g.sigmoid(g.conv2d(s, weights(g, "se2.w", {8, 4, 1, 1}, 7)));
  y = g.add(g.mul(y, s), weights(g, "shift", {8, 1, 1}, 8));
  y = g.conv2d(y, weights(g, "dw.w", {8, 1, 3, 3}, 9), {.pad = {1, 1, 1, 1}, .groups = 8});
  g.output("features", y);
  const Tensor pooled = g.reshape(g.global_avg_pool(y), {2, 8});
  g.output("logits", g.gemm(pooled, weights(g, "fc.w", {8, 5}, 10)));
  return g;
}

std::int64_t transposes(const Device& device, const Graph& g, CompileOptions options) {
  options.profile = true;
  Executable exe = device.compile(g, options);
  cases::set_random_inputs(exe, g, 1);
  exe.run();
  const auto& nodes = exe.node_timings();
  return std::count_if(nodes.begin(), nodes.end(), [](const NodeTiming& t) { return t.op == OpKind::Transpose; });
}

void check_matches_as_built(const Device& device, const Graph& g, const CompileOptions& options) {
  for (const char* out : {"features", "logits"}) {
    const auto run = [&](const Device& d, const CompileOptions& o) {
      Executable exe = d.compile(g, o);
      cases::set_random_inputs(exe, g, 7);
      exe.run();
      return exe.output(out);
    };
    const cases::Comparison c = cases::compare(run(device, options), run(Device::open("ref"), {.optimize = false}));
    CHECK_MESSAGE(c.nmse < 1e-10, device.info().spec << " " << out << ": nmse " << c.nmse);
    CHECK(c.non_finite == 0);
  }
}

TEST_CASE("NHWC on request: one transpose in, one per output that needs NCHW, results unchanged") {
  const Graph g = small_cnn();
  for (const std::string& spec : {std::string("ref"), std::string("cpu")}) {
    const Device device = Device::open(spec);
    // x in; "features" out; the head's pooled [2, 1, 1, 8] before its reshape.
    CHECK_MESSAGE(transposes(device, g, {.layout = Layout::NHWC}) == 3, spec);
    CHECK(transposes(device, g, {.layout = Layout::NCHW}) == 0);
    check_matches_as_built(device, g, {.layout = Layout::NHWC});
  }
}

// A training-mode block: batch statistics (reductions over N, H and W), a batchnorm that reads them
// and so cannot be folded into the conv, and stochastic depth (one dropout draw per sample).
Graph statistics_block() {
  Graph g;
  const Tensor x = g.input("x", {3, 4, 7, 5});
  const Tensor y = g.conv2d(x, weights(g, "w", {6, 4, 3, 3}, 30), {.pad = {1, 1, 1, 1}});
  const Shape channel{6};
  const Tensor mean = g.reduce(y, {.op = Reduction::Mean, .axes = {0, 2, 3}});
  const Tensor centred = g.sub(y, mean);
  const Tensor var = g.reduce(g.mul(centred, centred), {.op = Reduction::Mean, .axes = {0, 2, 3}});
  Tensor h = g.batchnorm(y, weights(g, "s", channel, 31), weights(g, "b", channel, 32), g.reshape(mean, channel),
                         g.reshape(var, channel));
  h = g.dropout(g.relu(h), g.constant("step", {1}, std::vector<float>{0.0f}), {.ratio = 0.25f, .seed = 5, .mask_dims = 1});
  h = g.conv2d(h, weights(g, "w2", {5, 6, 1, 1}, 33));
  g.output("features", h);
  g.output("logits", g.reshape(g.global_avg_pool(h), {3, 5}));
  return g;
}

TEST_CASE("batch statistics, a batchnorm of them and stochastic depth stay channels-last, results unchanged") {
  const Graph g = statistics_block();
  // Of feature maps, only x into the first conv and "features" out: the pooled [3, 1, 1, 5] and the
  // statistics' [1, 1, 1, 6] on their way to the batchnorm's [6] are a handful of values.
  const Graph moved = detail::channels_last(g);
  std::vector<std::string> maps;
  for (const Node& n : moved.nodes())
    if (n.op == OpKind::Transpose && moved.desc(n.output).numel() > 30) maps.push_back(n.name);
  CHECK(maps == std::vector<std::string>{"x.nhwc", "conv2d_10.nchw"});
  for (const std::string& spec : {std::string("ref"), std::string("cpu")})
    check_matches_as_built(Device::open(spec), g, {.layout = Layout::NHWC});
}

TEST_CASE("a device without NHWC kernels keeps the graph's layout") {
  const Graph g = small_cnn();
  for (const DeviceInfo& d : devices()) {
    const Device device = Device::open(d.spec);
    Graph probe;
    const Tensor x = probe.input("x", {1, 4, 4, 3});
    probe.output("y", probe.conv2d(x, probe.input("w", {2, 3, 1, 1}), {.layout = Layout::NHWC}));
    if (device.unsupported_reason(probe, probe.nodes()[0], {}).empty()) continue;
    CHECK(contains(device.unsupported_reason(probe, probe.nodes()[0], {}), "NHWC"));
    CHECK(transposes(device, g, {.layout = Layout::NHWC}) == 0);
    check_matches_as_built(device, g, {.layout = Layout::NHWC});
  }
}

TEST_CASE("the device's preference decides where no layout is asked for") {
  const Graph g = small_cnn();
  const Device cpu = Device::open("cpu");
  for (const Impl impl : {Impl::Native, Impl::Vendor}) {
    if (!cpu.unsupported_reason(g, g.nodes()[0], {.impl = impl}).empty()) continue;  // built without oneDNN
    const bool nhwc = cpu.preferred_layout(g, g.nodes()[0], {.impl = impl}) == Layout::NHWC;
    CHECK(transposes(cpu, g, {.impl = impl}) == (nhwc ? 3 : 0));
    check_matches_as_built(cpu, g, {.impl = impl});
  }
  CHECK(Device::open("ref").preferred_layout(g, g.nodes()[0], {}) == Layout::NCHW);
}

TEST_CASE("an NHWC conv's batchnorm is not folded: batchnorm normalises dimension 1") {
  Graph g;
  const Tensor x = g.input("x", {1, 5, 6, 4});  // NHWC: H = 5, W = 6, C = 4
  const Tensor y = g.conv2d(x, weights(g, "w", {5, 4, 3, 3}, 20), {.pad = {1, 1, 1, 1}, .layout = Layout::NHWC});
  // [1, 5, 6, 5]: dimension 1 is H, and has 5 entries like the filters.
  const Shape five{5};
  g.output("y", g.batchnorm(y, weights(g, "s", five, 21), weights(g, "b", five, 22), weights(g, "m", five, 23),
                            g.constant("v", five, std::vector<float>(5, 1.0f))));
  const Device ref = Device::open("ref");
  Executable folded = ref.compile(g), plain = ref.compile(g, {.optimize = false});
  cases::set_random_inputs(folded, g, 3);
  cases::set_random_inputs(plain, g, 3);
  folded.run();
  plain.run();
  CHECK(folded.output("y") == plain.output("y"));
}

}  // namespace
}  // namespace porta::test
