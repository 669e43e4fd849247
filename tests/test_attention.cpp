// The attention op against the unfused graph it replaces (matmul, scale, mask, softmax, matmul) on
// every device; its builder's checks; the ONNX pattern folded at import and written back unfused.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>

#include "op_cases/verify.hpp"
#include "porta/onnx.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

struct Problem {
  std::int64_t b, h, sq, sk, d, dv;
  AttentionParams p;
  bool mask = false;  // [b, 1, 1, sk], every third key hidden
};

// The graph with q, k, v (and the mask) as inputs: fused as one node, or spelt out.
Graph attention_graph(const Problem& s, bool fused) {
  Graph g;
  const Tensor q = g.input("q", {s.b, s.h, s.sq, s.d}), k = g.input("k", {s.b, s.h, s.sk, s.d});
  const Tensor v = g.input("v", {s.b, s.h, s.sk, s.dv});
  std::vector<float> values(static_cast<std::size_t>(s.b * s.sk));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = i % 3 == 2 ? -1e4f : 0.25f;
  const Tensor mask = s.mask ? g.constant("mask", {s.b, 1, 1, s.sk}, values) : Tensor{};
  if (fused) {
    g.output("y", g.attention(q, k, v, s.p, mask));
    return g;
  }
  Tensor scores = g.mul(g.matmul(q, k, {.trans_b = true}), g.constant("scale", {1}, std::vector<float>{s.p.scale}));
  Tensor all = mask;  // the mask and the causal one, summed: the chain has one Add, as exporters write it
  if (s.p.causal) {
    std::vector<float> hidden(static_cast<std::size_t>(s.sq * s.sk));
    for (std::int64_t i = 0; i < s.sq; ++i)
      for (std::int64_t j = 0; j < s.sk; ++j)
        hidden[static_cast<std::size_t>(i * s.sk + j)] = j > i ? -std::numeric_limits<float>::infinity() : 0.0f;
    const Tensor causal = g.constant("causal", {s.sq, s.sk}, hidden);
    all = mask ? g.add(mask, causal) : causal;
  }
  if (all) scores = g.add(scores, all);
  g.output("y", g.matmul(g.softmax(scores, -1), v));
  return g;
}

std::vector<float> run(const Device& device, const Graph& g) {
  Executable exe = device.compile(g, {.poison_memory = true});
  cases::set_random_inputs(exe, g, 11);
  exe.run();
  return exe.output("y");
}

TEST_CASE("attention matches its unfused graph on every device") {
  const Problem problems[] = {
      {1, 1, 1, 1, 1, 1, {.scale = 0.5f}},
      {2, 3, 70, 70, 16, 16, {.scale = 0.25f}, true},
      {1, 2, 65, 131, 8, 12, {.scale = 0.3f, .causal = true}},
      {1, 2, 131, 65, 8, 8, {.scale = 0.3f, .causal = true}, true},
  };
  const Device ref = Device::open("ref");
  for (const Problem& s : problems) {
    const std::vector<float> want = run(ref, attention_graph(s, false));
    for (const std::string& spec : devices_under_test()) {
      const std::optional<Device> device = open_or_skip(spec);
      if (!device) continue;
      const cases::Comparison c = cases::compare(run(*device, attention_graph(s, true)), want);
      CHECK_MESSAGE(c.nmse < 1e-10, spec << " sq " << s.sq << " sk " << s.sk << ": nmse " << c.nmse);
      CHECK(c.non_finite == 0);
    }
  }
}

TEST_CASE("attention's builder resolves the scale and refuses shapes it cannot take") {
  Graph g;
  const Tensor q = g.input("q", {2, 3, 5, 16}), k = g.input("k", {2, 3, 7, 16}), v = g.input("v", {2, 3, 7, 4});
  const Tensor y = g.attention(q, k, v);
  CHECK(g.shape(y) == Shape{2, 3, 5, 4});
  CHECK(std::get<AttentionParams>(g.nodes().back().params).scale == 0.25f);
  check_error([&] { g.attention(q, q, v); }, ErrorCode::ShapeMismatch, {"attention", "v must have k's sequence"});
  check_error([&] { g.attention(g.input("flat", {5, 16}), k, v); }, ErrorCode::ShapeMismatch, {"[batch, heads"});
  check_error([&] { g.attention(q, k, v, {}, g.input("m", {2, 3, 5, 6})); }, ErrorCode::ShapeMismatch,
              {"mask [2, 3, 5, 6]", "[2, 3, 5, 7]"});
  check_error([&] { g.attention(q, k, v, {.scale = -1.0f}); }, ErrorCode::InvalidArgument, {"scale"});
  check_error([&] { g.attention(q, k, g.input("h", {2, 3, 7, 4}, DType::f16)); }, ErrorCode::DTypeMismatch, {});
}

TEST_CASE("the unfused ONNX pattern imports as one attention node, and attention exports as that pattern") {
  const Device ref = Device::open("ref");
  for (const bool causal : {false, true}) {
    const Problem s{2, 2, 6, 9, 4, 5, {.scale = 0.5f, .causal = causal}, true};
    const Graph fused = attention_graph(s, true);
    for (const Graph& source : {attention_graph(s, false), fused}) {
      const Graph imported = onnx::load_bytes(onnx::save_bytes(source));
      const auto attention = std::count_if(imported.nodes().begin(), imported.nodes().end(),
                                           [](const Node& n) { return n.op == OpKind::Attention; });
      CHECK(attention == 1);
      CHECK(imported.nodes().size() <= 2);  // the attention node, and a transpose where k came transposed
      const cases::Comparison c = cases::compare(run(ref, imported), run(ref, fused));
      CHECK_MESSAGE(c.nmse < 1e-12, "causal " << causal << ": nmse " << c.nmse);
    }
  }
}

TEST_CASE("a chain with a link read elsewhere stays unfused at import") {
  Graph g = attention_graph({1, 1, 4, 4, 2, 2, {.scale = 1.0f}}, false);
  const auto softmax =
      std::find_if(g.nodes().begin(), g.nodes().end(), [](const Node& n) { return n.op == OpKind::Softmax; });
  g.output("weights", softmax->output);
  const Graph imported = onnx::load_bytes(onnx::save_bytes(g));
  CHECK(std::none_of(imported.nodes().begin(), imported.nodes().end(),
                     [](const Node& n) { return n.op == OpKind::Attention; }));
}

TEST_CASE("the fused node's gradients are the unfused graph's: q, k and v, with a mask and causal") {
  for (const Problem& s : {Problem{2, 2, 3, 5, 4, 3, {.scale = 0.5f}, true}, Problem{1, 2, 4, 4, 2, 3, {.scale = 0.8f, .causal = true}}}) {
    std::vector<std::vector<float>> grads[2];
    for (const bool fused : {true, false}) {
      Graph g = attention_graph(s, fused);
      const Tensor loss = g.reduce(g.mul(g.outputs().at(0).second, g.outputs().at(0).second),
                                   {.op = Reduction::Sum, .axes = {}, .keepdims = true});
      const std::vector<Tensor> wrt = g.inputs();
      const std::vector<Tensor> d = autodiff::gradients(g, loss, wrt);
      for (std::size_t i = 0; i < d.size(); ++i) g.output("grad" + std::to_string(i), d[i]);
      Executable exe = Device::open("ref").compile(g);
      cases::set_random_inputs(exe, g, 11);
      exe.run();
      for (std::size_t i = 0; i < d.size(); ++i) grads[fused].push_back(exe.output("grad" + std::to_string(i)));
    }
    for (std::size_t i = 0; i < 3; ++i) {
      const cases::Comparison c = cases::compare(grads[1][i], grads[0][i]);
      CHECK_MESSAGE(c.nmse < 1e-12, "input " << i << ": nmse " << c.nmse);
    }
  }
}

}  // namespace
}  // namespace porta::test
