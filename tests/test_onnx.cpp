// ONNX import: the wire decoder's error paths, each supported op against the builder call it maps
// to (or its formula), and the importer's errors. Models are written by onnx_writer.hpp. Export:
// graphs written by onnx::save_bytes and read back compute what they did.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <span>

#include <unistd.h>

#include "graph_gen/differential.hpp"
#include "onnx_writer.hpp"
#include "op_cases/verify.hpp"
#include "porta/onnx.hpp"
#include "test_util.hpp"

namespace {

using namespace porta;
using namespace porta::test;
using namespace porta::test::onnx_writer;
using Inputs = std::vector<std::pair<std::string, std::vector<float>>>;

std::vector<float> random_values(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::vector<float> run_ref(const Graph& g, const Inputs& inputs, std::string_view output) {
  Executable exe = Device::open("ref").compile(g);
  for (const auto& [name, values] : inputs) exe.set_input(name, values);
  exe.run();
  return exe.output(output);
}

// A model of one node reading input "x" of `shape` and writing "y".
Model one_node(const Proto& node, const Shape& shape, std::vector<Proto> initializers = {}, std::int64_t opset = 13) {
  Model m;
  m.nodes = {node};
  m.initializers = std::move(initializers);
  m.inputs = {value_info("x", shape)};
  m.outputs = {value_info("y", {})};
  m.opset = opset;
  return m;
}

// Loads `m`, runs it on ref with random x, and returns {x, y}.
std::pair<std::vector<float>, std::vector<float>> run_model(const Model& m, const Shape& x_shape) {
  const Graph g = onnx::load_bytes(m.bytes());
  const auto x = random_values(numel(x_shape), 7);
  return {x, run_ref(g, {{"x", x}}, "y")};
}

// Exports `g`, imports it again and runs both on ref (passes off) on the same seeded inputs; each
// output is judged as the random-graph differential test judges it (the nodes ONNX spells apart
// round in between, as a device's kernels may). False where ref overflows.
bool check_round_trip(const Graph& g, std::uint64_t seed) {
  const Graph back = onnx::load_bytes(onnx::save_bytes(g));
  REQUIRE(back.inputs().size() == g.inputs().size());
  REQUIRE(back.outputs().size() == g.outputs().size());
  const Device ref = Device::open("ref");
  Executable want = ref.compile(g, {.optimize = false}), got = ref.compile(back, {.optimize = false});
  cases::set_random_inputs(want, g, seed);
  cases::set_random_inputs(got, back, seed);
  want.run();
  got.run();
  cases::Verification v;
  v.passed = true;
  for (const auto& [name, t] : g.outputs()) {
    const std::vector<float> w = want.output(name);
    if (!std::all_of(w.begin(), w.end(), [](float x) { return std::isfinite(x); })) return false;
  }
  const std::vector<cases::Limits> limits = graph_gen::judged_output_limits(g, seed);
  for (std::size_t i = 0; i < g.outputs().size(); ++i) {
    const auto& [name, t] = g.outputs()[i];
    cases::check_output(v, name, g.shape(t), g.dtype(t), limits[i], got.output(name), want.output(name));
  }
  CHECK_MESSAGE(v.passed, v.detail);
  return true;
}

// The same op built directly with the graph API must give the same values as the imported one.
template <class Build>
void check_against_builder(const Model& m, const Shape& x_shape, Build build) {
  const Graph imported = onnx::load_bytes(m.bytes());
  Graph direct;
  const Tensor x = direct.input("x", x_shape);
  direct.output("y", build(direct, x));
  const auto xv = random_values(numel(x_shape), 11);
  const auto got = run_ref(imported, {{"x", xv}}, "y");
  const auto want = run_ref(direct, {{"x", xv}}, "y");
  CHECK(imported.shape(imported.outputs()[0].second) == direct.shape(direct.outputs()[0].second));
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
}

template <class F>
void check_elementwise(const Model& m, const Shape& shape, F formula) {
  const auto [x, y] = run_model(m, shape);
  REQUIRE(x.size() == y.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = formula(x[i]);
    if (std::isnan(want)) REQUIRE(std::isnan(y[i]));
    else REQUIRE(y[i] == doctest::Approx(want).epsilon(1e-5));
  }
}


// Einsum by its definition, for an explicit equation without spaces: over every assignment of the
// letters, the operands' elements multiplied and summed into the output's element.
std::vector<float> einsum_by_definition(const std::string& equation, const std::vector<Shape>& shapes,
                                        const std::vector<std::vector<float>>& values) {
  const std::string output = equation.substr(equation.find("->") + 2);
  std::vector<std::string> terms{""};
  for (const char c : equation.substr(0, equation.find("->")))
    if (c == ',') terms.emplace_back();
    else terms.back().push_back(c);
  std::string letters;
  std::vector<std::int64_t> extents;
  for (std::size_t t = 0; t < terms.size(); ++t)
    for (std::size_t i = 0; i < terms[t].size(); ++i)
      if (letters.find(terms[t][i]) == std::string::npos) letters += terms[t][i], extents.push_back(shapes[t][i]);
  const auto offset = [&](const std::string& term, const std::vector<std::int64_t>& at) {
    std::int64_t o = 0;
    for (const char c : term) o = o * extents[letters.find(c)] + at[letters.find(c)];
    return static_cast<std::size_t>(o);
  };
  std::int64_t out_count = 1;
  for (const char c : output) out_count *= extents[letters.find(c)];
  std::vector<float> y(static_cast<std::size_t>(out_count), 0.0f);
  std::vector<std::int64_t> at(letters.size(), 0);
  for (bool more = true; more;) {
    float product = 1.0f;
    for (std::size_t t = 0; t < terms.size(); ++t) product *= values[t][offset(terms[t], at)];
    y[offset(output, at)] += product;
    more = false;
    for (std::size_t i = letters.size(); i-- > 0 && !more;) more = ++at[i] < extents[i] || (at[i] = 0, false);
  }
  return y;
}

}  // namespace

TEST_SUITE("onnx") {
  TEST_CASE("conv: strides, asymmetric pads, dilations, groups and bias") {
    const Shape xs{2, 4, 9, 8};
    const auto w = random_values(6 * 2 * 3 * 2, 1), b = random_values(6, 2);
    const Model m =
        one_node(node("Conv", {"x", "w", "b"}, {"y"}, "conv",
                      {attr_ints("strides", {2, 1}), attr_ints("pads", {1, 0, 2, 1}), attr_ints("dilations", {1, 2}),
                       attr_int("group", 2), attr_ints("kernel_shape", {3, 2})}),
                 xs, {tensor("w", {6, 2, 3, 2}, w), tensor("b", {6}, b, false)});
    check_against_builder(m, xs, [&](Graph& g, Tensor x) {
      return g.conv2d(x, g.constant("w", {6, 2, 3, 2}, w),
                      {.stride = {2, 1}, .pad = {1, 0, 2, 1}, .dilation = {1, 2}, .groups = 2},
                      g.constant("b", {6}, b));
    });
  }

  TEST_CASE("conv: auto_pad SAME_UPPER, SAME_LOWER and VALID") {
    const Shape xs{1, 2, 7, 8};
    const auto w = random_values(3 * 2 * 3 * 3, 3);
    // Stride 2 over 7 rows needs 2 rows of padding (1 + 1), over 8 columns 1 (the odd one at the end for UPPER).
    const std::pair<std::string, std::array<std::int64_t, 4>> cases[] = {
        {"SAME_UPPER", {1, 0, 1, 1}}, {"SAME_LOWER", {1, 1, 1, 0}}, {"VALID", {0, 0, 0, 0}}};
    for (const auto& [mode, pad] : cases) {
      CAPTURE(mode);
      const Model m = one_node(
          node("Conv", {"x", "w"}, {"y"}, "conv", {attr_ints("strides", {2, 2}), attr_string("auto_pad", mode)}), xs,
          {tensor("w", {3, 2, 3, 3}, w)});
      check_against_builder(m, xs, [&](Graph& g, Tensor x) {
        return g.conv2d(x, g.constant("w", {3, 2, 3, 3}, w), {.stride = {2, 2}, .pad = pad});
      });
    }
    const Model bad = one_node(node("Conv", {"x", "w"}, {"y"}, "conv", {attr_string("auto_pad", "SAME")}), xs,
                               {tensor("w", {3, 2, 3, 3}, w)});
    check_error([&] { onnx::load_bytes(bad.bytes()); }, ErrorCode::InvalidArgument, {"'conv'", "auto_pad 'SAME'"});
  }

  TEST_CASE("gemm, matmul") {
    const auto w = random_values(5 * 3, 4), c = random_values(5, 5);
    const Model gemm = one_node(node("Gemm", {"x", "w", "c"}, {"y"}, "fc",
                                     {attr_int("transB", 1), attr_float("alpha", 0.5f), attr_float("beta", 2.0f)}),
                                {4, 3}, {tensor("w", {5, 3}, w), tensor("c", {5}, c)});
    check_against_builder(gemm, {4, 3}, [&](Graph& g, Tensor x) {
      return g.gemm(x, g.constant("w", {5, 3}, w), {.trans_b = true, .alpha = 0.5f, .beta = 2.0f},
                    g.constant("c", {5}, c));
    });
    const auto b = random_values(3 * 2, 6);
    const Model matmul = one_node(node("MatMul", {"x", "b"}, {"y"}), {2, 4, 3}, {tensor("b", {3, 2}, b)});
    check_against_builder(matmul, {2, 4, 3}, [&](Graph& g, Tensor x) {
      return g.matmul(x, g.constant("b", {3, 2}, b));
    });
  }

  TEST_CASE("binary ops broadcast against scalar and vector initializers") {
    const auto v = random_values(4, 8);
    const std::pair<std::string, Tensor (Graph::*)(Tensor, Tensor, std::string)> ops[] = {
        {"Add", &Graph::add}, {"Sub", &Graph::sub}, {"Mul", &Graph::mul}, {"Div", &Graph::div}};
    for (const auto& [op, method] : ops) {
      CAPTURE(op);
      const Model vec = one_node(node(op, {"x", "v"}, {"y"}), {2, 3, 4}, {tensor("v", {4}, v)});
      check_against_builder(vec, {2, 3, 4},
                            [&](Graph& g, Tensor x) { return (g.*method)(x, g.constant("v", {4}, v), {}); });
      // A rank-0 initializer first: porta holds it as [1].
      const Model scalar = one_node(node(op, {"s", "x"}, {"y"}), {2, 3}, {tensor("s", {}, {1.5f})});
      check_against_builder(scalar, {2, 3}, [&](Graph& g, Tensor x) {
        return (g.*method)(g.constant("s", {1}, std::vector{1.5f}), x, {});
      });
    }
  }

  TEST_CASE("activations: Relu, Sigmoid, Clip, HardSigmoid, HardSwish") {
    const Shape s{3, 5};
    check_elementwise(one_node(node("Relu", {"x"}, {"y"}), s), s, [](float x) { return std::max(x, 0.0f); });
    check_elementwise(one_node(node("Sigmoid", {"x"}, {"y"}), s), s,
                      [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
    // Clip from opset 11 takes its bounds as inputs; an empty name skips one.
    check_elementwise(one_node(node("Clip", {"x", "lo"}, {"y"}), s, {tensor("lo", {}, {-0.5f})}), s,
                      [](float x) { return std::max(x, -0.5f); });
    check_elementwise(one_node(node("Clip", {"x", "", "hi"}, {"y"}), s, {tensor("hi", {}, {0.25f})}), s,
                      [](float x) { return std::min(x, 0.25f); });
    check_elementwise(
        one_node(node("Clip", {"x"}, {"y"}, "c", {attr_float("min", 0.0f), attr_float("max", 6.0f)}), s, {}, 9), s,
        [](float x) { return std::clamp(x, 0.0f, 6.0f); });
    check_elementwise(
        one_node(node("HardSigmoid", {"x"}, {"y"}, "hs", {attr_float("alpha", 0.3f), attr_float("beta", 0.4f)}), s), s,
        [](float x) { return std::clamp(0.3f * x + 0.4f, 0.0f, 1.0f); });
    check_elementwise(one_node(node("HardSwish", {"x"}, {"y"}), s, {}, 14), s,
                      [](float x) { return x * std::clamp(x / 6.0f + 0.5f, 0.0f, 1.0f); });
    // Clip bounds computed at run time cannot be read at load time.
    const Model dynamic = one_node(node("Clip", {"x", "x"}, {"y"}, "clip"), s);
    check_error([&] { onnx::load_bytes(dynamic.bytes()); }, ErrorCode::Unsupported, {"'clip'", "min 'x'", "load time"});
  }

  TEST_CASE("elementwise math: Erf, Sqrt, Reciprocal, Pow; HardSigmoid and HardSwish are one node each") {
    const Shape s{3, 5};
    check_elementwise(one_node(node("Erf", {"x"}, {"y"}), s), s, [](float x) { return std::erf(x); });
    check_elementwise(one_node(node("Sqrt", {"x"}, {"y"}), s), s, [](float x) { return std::sqrt(x); });
    check_elementwise(one_node(node("Reciprocal", {"x"}, {"y"}), s), s, [](float x) { return 1.0f / x; });
    check_elementwise(one_node(node("Pow", {"x", "e"}, {"y"}), s, {tensor("e", {}, {2.0f})}), s,
                      [](float x) { return x * x; });
    check_elementwise(one_node(node("Pow", {"b", "x"}, {"y"}), s, {tensor("b", {}, {2.0f})}), s,
                      [](float x) { return std::exp2(x); });
    for (const char* op : {"HardSigmoid", "HardSwish"}) {
      const Graph g = onnx::load_bytes(one_node(node(op, {"x"}, {"y"}), s, {}, 14).bytes());
      REQUIRE(g.nodes().size() == 1);
      CHECK(to_string(g.nodes()[0].op) == (std::string_view(op) == "HardSwish" ? "hard_swish" : "hard_sigmoid"));
    }
  }

  TEST_CASE("reductions: axes as attribute or input, keepdims, noop_with_empty_axes") {
    const Shape xs{2, 3, 4};
    const auto reduce = [](Reduction op, std::vector<std::int64_t> axes, bool keepdims) {
      return [=](Graph& g, Tensor x) { return g.reduce(x, {.op = op, .axes = axes, .keepdims = keepdims}); };
    };
    check_against_builder(one_node(node("ReduceMean", {"x"}, {"y"}, "r", {attr_ints("axes", {-1})}), xs), xs,
                          reduce(Reduction::Mean, {2}, true));
    check_against_builder(
        one_node(node("ReduceMax", {"x"}, {"y"}, "r", {attr_ints("axes", {0, 2}), attr_int("keepdims", 0)}), xs), xs,
        reduce(Reduction::Max, {0, 2}, false));
    check_against_builder(one_node(node("ReduceMin", {"x"}, {"y"}), xs), xs, reduce(Reduction::Min, {}, true));
    check_against_builder(one_node(node("ReduceSum", {"x", "axes"}, {"y"}, "r", {attr_int("keepdims", 0)}), xs,
                                   {int64_tensor("axes", {1})}),
                          xs, reduce(Reduction::Sum, {1}, false));
    check_against_builder(one_node(node("ReduceMax", {"x", "axes"}, {"y"}), xs, {int64_tensor("axes", {-2, 0})}, 18),
                          xs, reduce(Reduction::Max, {0, 1}, true));
    // Opset 13's ReduceSum with no axes reduces everything, unless noop_with_empty_axes says otherwise.
    check_against_builder(one_node(node("ReduceSum", {"x"}, {"y"}), xs), xs, reduce(Reduction::Sum, {}, true));
    const Model noop = one_node(node("ReduceSum", {"x"}, {"y"}, "r", {attr_int("noop_with_empty_axes", 1)}), xs);
    CHECK(onnx::load_bytes(noop.bytes()).nodes().empty());
    const Model dynamic = one_node(node("ReduceSum", {"x", "x"}, {"y"}, "r"), xs);
    check_error([&] { onnx::load_bytes(dynamic.bytes()); }, ErrorCode::Unsupported, {"axes 'x'", "load time"});
  }

  TEST_CASE("Einsum: the products and sums exporters write, against its definition") {
    struct Case {
      std::string equation, plain;  // as written, and explicit without spaces for the definition
      Shape x, w;                   // w empty: one operand
    };
    const Case cases[] = {
        {"B G H I D, B G H J D -> B G H I J", "bghid,bghjd->bghij", {1, 2, 2, 3, 4}, {1, 2, 2, 5, 4}},  // maxvit_t
        {"B G H I J, B G H J D -> B G H I D", "bghij,bghjd->bghid", {1, 2, 2, 3, 5}, {1, 2, 2, 5, 4}},
        {"ij,jk", "ij,jk->ik", {3, 4}, {4, 5}},  // the output implicit
        {"bik,kj->jbi", "bik,kj->jbi", {2, 3, 4}, {4, 5}},
        {"i,j->ij", "i,j->ij", {3}, {4}},
        {"bij,bj->bi", "bij,bj->bi", {2, 3, 4}, {2, 4}},
        {"ijk,k->i", "ijk,k->i", {2, 3, 4}, {4}},  // j of one operand alone: summed first
        {"bij->jb", "bij->jb", {2, 3, 4}, {}},
    };
    for (const Case& c : cases) {
      CAPTURE(c.equation);
      const auto x = random_values(numel(c.x), 31), w = random_values(numel(c.w), 32);
      const bool two = !c.w.empty();
      const Model m = one_node(node("Einsum", two ? std::vector<std::string>{"x", "w"} : std::vector<std::string>{"x"},
                                    {"y"}, "einsum", {attr_string("equation", c.equation)}),
                               c.x, two ? std::vector<Proto>{tensor("w", c.w, w)} : std::vector<Proto>{}, 12);
      const std::vector<float> got = run_ref(onnx::load_bytes(m.bytes()), {{"x", x}}, "y");
      const std::vector<float> want = two ? einsum_by_definition(c.plain, {c.x, c.w}, {x, w})
                                          : einsum_by_definition(c.plain, {c.x}, {x});
      REQUIRE(got.size() == want.size());
      for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
    }
    const auto refused = [&](const std::string& equation, const Shape& x, ErrorCode code, const char* why) {
      const Model m = one_node(node("Einsum", {"x"}, {"y"}, "e", {attr_string("equation", equation)}), x, {}, 12);
      check_error([&] { onnx::load_bytes(m.bytes()); }, code, {"'e'", why});
    };
    refused("...ij->ij", {2, 3, 4}, ErrorCode::Unsupported, "ellipsis");
    refused("ii->i", {3, 3}, ErrorCode::Unsupported, "diagonal");
    refused("ij->k", {3, 3}, ErrorCode::InvalidArgument, "'k' is in no operand");
    refused("ijk->ij", {3, 3}, ErrorCode::InvalidArgument, "2-D input");
    refused("ij,jk->ik", {3, 3}, ErrorCode::InvalidArgument, "2 terms for 1 inputs");
  }

  TEST_CASE("RMSNormalization (opset 23): axis and epsilon, against its formula") {
    const Shape xs{2, 3, 4};
    const auto scale = random_values(12, 23);
    const Model m = one_node(node("RMSNormalization", {"x", "s"}, {"y"}, "rms",
                                  {attr_int("axis", 1), attr_float("epsilon", 1e-3f)}),
                             xs, {tensor("s", {3, 4}, scale)}, 23);
    const auto [x, y] = run_model(m, xs);
    for (std::size_t row = 0; row < 2; ++row) {
      double squares = 0.0;
      for (std::size_t i = 0; i < 12; ++i) squares += double(x[row * 12 + i]) * x[row * 12 + i];
      const double rms = std::sqrt(squares / 12.0 + 1e-3);
      for (std::size_t i = 0; i < 12; ++i)
        CHECK(y[row * 12 + i] == doctest::Approx(x[row * 12 + i] / rms * scale[i]).epsilon(1e-5));
    }
    const std::vector<float> row(scale.begin(), scale.begin() + 4);
    const Model plain = one_node(node("RMSNormalization", {"x", "s"}, {"y"}), xs, {tensor("s", {4}, row)}, 23);
    check_against_builder(plain, xs, [&](Graph& g, Tensor x) { return g.rms_norm(x, g.constant("s", {4}, row)); });
    const Model stash = one_node(node("RMSNormalization", {"x", "s"}, {"y"}, "r", {attr_int("stash_type", 10)}), xs,
                                 {tensor("s", {4}, row)}, 23);
    check_error([&] { onnx::load_bytes(stash.bytes()); }, ErrorCode::Unsupported, {"'r'", "stash_type"});
  }

  TEST_CASE("Gelu (opset 20): the erf form and the tanh one") {
    const Shape xs{3, 5};
    for (const bool tanh : {false, true}) {
      const Model m = one_node(node("Gelu", {"x"}, {"y"}, "gelu", {attr_string("approximate", tanh ? "tanh" : "none")}),
                               xs, {}, 20);
      const auto [x, y] = run_model(m, xs);
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double v = x[i], k = std::sqrt(2.0 / 3.141592653589793);
        const double want = tanh ? 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)))
                                 : 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
        CHECK(y[i] == doctest::Approx(want).epsilon(1e-5));
      }
    }
    const Model other = one_node(node("Gelu", {"x"}, {"y"}, "g", {attr_string("approximate", "fast")}), xs, {}, 20);
    check_error([&] { onnx::load_bytes(other.bytes()); }, ErrorCode::InvalidArgument, {"'g'", "'fast'"});
  }

  TEST_CASE("LayerNormalization: axis, epsilon, optional bias") {
    const Shape xs{2, 3, 4};
    const auto scale = random_values(12, 21), bias = random_values(12, 22);
    const Model full = one_node(node("LayerNormalization", {"x", "s", "b"}, {"y"}, "ln",
                                     {attr_int("axis", 1), attr_float("epsilon", 1e-3f)}),
                                xs, {tensor("s", {3, 4}, scale), tensor("b", {3, 4}, bias)}, 17);
    check_against_builder(full, xs, [&](Graph& g, Tensor x) {
      return g.layer_norm(x, g.constant("s", {3, 4}, scale), g.constant("b", {3, 4}, bias),
                          {.axis = 1, .epsilon = 1e-3f});
    });
    const std::vector<float> row(scale.begin(), scale.begin() + 4);
    const Model plain = one_node(node("LayerNormalization", {"x", "s"}, {"y"}), xs, {tensor("s", {4}, row)}, 17);
    check_against_builder(plain, xs,
                          [&](Graph& g, Tensor x) { return g.layer_norm(x, g.constant("s", {4}, row)); });
    const Model stats = one_node(node("LayerNormalization", {"x", "s"}, {"y", "mean"}, "ln"), xs,
                                 {tensor("s", {4}, row)}, 17);
    check_error([&] { onnx::load_bytes(stats.bytes()); }, ErrorCode::Unsupported, {"'ln'", "output 1"});
  }

  TEST_CASE("pooling") {
    const Shape xs{1, 3, 9, 10};
    const Model max = one_node(node("MaxPool", {"x"}, {"y"}, "pool",
                                    {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}),
                                     attr_ints("pads", {1, 1, 1, 0}), attr_int("ceil_mode", 1)}),
                               xs);
    check_against_builder(max, xs, [](Graph& g, Tensor x) {
      return g.max_pool2d(x, {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1, 1, 0}, .ceil_mode = true});
    });
    const Model avg = one_node(
        node("AveragePool", {"x"}, {"y"}, "pool",
             {attr_ints("kernel_shape", {2, 3}), attr_ints("pads", {1, 1, 0, 1}), attr_int("count_include_pad", 1)}),
        xs);
    check_against_builder(avg, xs, [](Graph& g, Tensor x) {
      return g.avg_pool2d(x, {.kernel = {2, 3}, .pad = {1, 1, 0, 1}, .count_include_pad = true});
    });
    check_against_builder(one_node(node("GlobalAveragePool", {"x"}, {"y"}), xs), xs,
                          [](Graph& g, Tensor x) { return g.global_avg_pool(x); });
    const Model indices =
        one_node(node("MaxPool", {"x"}, {"y", "idx"}, "pool", {attr_ints("kernel_shape", {2, 2})}), xs);
    check_error([&] { onnx::load_bytes(indices.bytes()); }, ErrorCode::Unsupported, {"'pool'", "'idx'"});
    const Model three_d =
        one_node(node("MaxPool", {"x"}, {"y"}, "pool3", {attr_ints("kernel_shape", {2, 2, 2})}), {1, 1, 4, 4, 4});
    check_error([&] { onnx::load_bytes(three_d.bytes()); }, ErrorCode::Unsupported, {"'pool3'", "2-D"});
  }

  TEST_CASE("shape ops: Flatten, Reshape, Transpose, Concat") {
    const Shape xs{2, 3, 4, 5};
    check_against_builder(one_node(node("Flatten", {"x"}, {"y"}, "f", {attr_int("axis", 2)}), xs), xs,
                          [](Graph& g, Tensor x) { return g.flatten(x, 2); });
    check_against_builder(one_node(node("Reshape", {"x", "shape"}, {"y"}), xs, {int64_tensor("shape", {0, -1, 5})}), xs,
                          [](Graph& g, Tensor x) {
                            return g.reshape(x, {2, 12, 5});
                          });
    check_against_builder(one_node(node("Transpose", {"x"}, {"y"}, "t", {attr_ints("perm", {0, 2, 3, 1})}), xs), xs,
                          [](Graph& g, Tensor x) {
                            return g.transpose(x, {0, 2, 3, 1});
                          });
    const auto c = random_values(2 * 2 * 4 * 5, 9);
    check_against_builder(
        one_node(node("Concat", {"x", "c"}, {"y"}, "cat", {attr_int("axis", -3)}), xs, {tensor("c", {2, 2, 4, 5}, c)}),
        xs, [&](Graph& g, Tensor x) {
          const Tensor parts[] = {x, g.constant("c", {2, 2, 4, 5}, c)};
          return g.concat(parts, 1);
        });
    const Model float_shape =
        one_node(node("Reshape", {"x", "shape"}, {"y"}, "r"), xs, {tensor("shape", {2}, {6.0f, 20.0f})});
    check_error([&] { onnx::load_bytes(float_shape.bytes()); }, ErrorCode::InvalidArgument, {"'r'", "int64"});
    const Model bad_shape = one_node(node("Reshape", {"x", "shape"}, {"y"}, "r"), xs, {int64_tensor("shape", {7, -1})});
    check_error([&] { onnx::load_bytes(bad_shape.bytes()); }, ErrorCode::ShapeMismatch, {"'r'"});
  }

  TEST_CASE("Slice, Split, Pad and Expand") {
    constexpr std::int64_t end = std::numeric_limits<std::int64_t>::max();
    const Shape xs{2, 3, 6};
    const std::vector<Proto> slice_inputs = {int64_tensor("s", {-1, 1}), int64_tensor("e", {-end, end}),
                                             int64_tensor("a", {2, 0}), int64_tensor("st", {-2, 1})};
    check_against_builder(one_node(node("Slice", {"x", "s", "e", "a", "st"}, {"y"}), xs, slice_inputs), xs,
                          [&](Graph& g, Tensor x) { return g.slice(x, {{-1, 1}, {-end, end}, {2, 0}, {-2, 1}}); });
    const std::vector<Proto> slice_attrs = {attr_ints("starts", {1}), attr_ints("ends", {3}), attr_ints("axes", {1})};
    check_against_builder(one_node(node("Slice", {"x"}, {"y"}, "s9", slice_attrs), xs, {}, 9), xs,
                          [](Graph& g, Tensor x) { return g.slice(x, {{1}, {3}, {1}, {}}); });
    // Split: the sizes as an input (13), an attribute (11) or none (equal pieces); y is the second piece.
    const Model split13 = one_node(node("Split", {"x", "sizes"}, {"a", "y", "c"}, "sp", {attr_int("axis", -1)}), xs,
                                   {int64_tensor("sizes", {1, 3, 2})});
    check_against_builder(split13, xs, [](Graph& g, Tensor x) { return g.slice(x, {{1}, {4}, {2}, {}}); });
    const Model split11 =
        one_node(node("Split", {"x"}, {"a", "y"}, "sp", {attr_int("axis", 2), attr_ints("split", {4, 2})}), xs, {}, 11);
    check_against_builder(split11, xs, [](Graph& g, Tensor x) { return g.slice(x, {{4}, {6}, {2}, {}}); });
    check_against_builder(one_node(node("Split", {"x"}, {"a", "y", "c"}, "sp", {attr_int("axis", 2)}), xs), xs,
                          [](Graph& g, Tensor x) { return g.slice(x, {{2}, {4}, {2}, {}}); });
    check_against_builder(
        one_node(node("Pad", {"x", "p", "v"}, {"y"}, "pad", {attr_string("mode", "reflect")}), xs,
                 {int64_tensor("p", {0, 1, 2, 0, 2, 5}), tensor("v", {}, {0.0f})}),
        xs, [](Graph& g, Tensor x) { return g.pad(x, {{0, 1, 2, 0, 2, 5}, PadMode::Reflect}); });
    check_against_builder(
        one_node(node("Pad", {"x", "p", "v"}, {"y"}), xs,
                 {int64_tensor("p", {0, 1, 2, 1, -1, 0}), tensor("v", {}, {2.5f})}),
        xs, [](Graph& g, Tensor x) { return g.pad(x, {{0, 1, 2, 1, -1, 0}, PadMode::Constant, 2.5f}); });
    check_against_builder(
        one_node(node("Pad", {"x", "p", "", "axes"}, {"y"}, "pad", {attr_string("mode", "edge")}), xs,
                 {int64_tensor("p", {1, 2, 3, 4}), int64_tensor("axes", {-1, 0})}, 18),
        xs, [](Graph& g, Tensor x) { return g.pad(x, {{2, 0, 1, 4, 0, 3}, PadMode::Edge}); });
    check_against_builder(
        one_node(node("Pad", {"x"}, {"y"}, "pad", {attr_ints("pads", {1, 0, 0, 0, 0, 1}), attr_float("value", -1.0f)}),
                 xs, {}, 10),
        xs, [](Graph& g, Tensor x) { return g.pad(x, {{1, 0, 0, 0, 0, 1}, PadMode::Constant, -1.0f}); });
    check_against_builder(
        one_node(node("Expand", {"x", "shape"}, {"y"}), xs, {int64_tensor("shape", {2, 1, 3, 1})}), xs,
        [](Graph& g, Tensor x) { return g.expand(x, {2, 2, 3, 6}); });
    const Model wrap = one_node(node("Pad", {"x", "p"}, {"y"}, "w", {attr_string("mode", "wrap")}), xs,
                                {int64_tensor("p", {0, 0, 1, 0, 0, 1})}, 18);  // wrap came in 19
    check_error([&] { onnx::load_bytes(wrap.bytes()); }, ErrorCode::Unsupported, {"'w'", "wrap"});
    const Model float_starts = one_node(node("Slice", {"x", "s", "e"}, {"y"}, "fs"), xs,
                                        {tensor("s", {1}, {0.0f}), int64_tensor("e", {1})});
    check_error([&] { onnx::load_bytes(float_starts.bytes()); }, ErrorCode::InvalidArgument, {"'fs'", "integer"});
    const Model uneven = one_node(node("Split", {"x", "sizes"}, {"a", "y"}, "un"), xs, {int64_tensor("sizes", {1, 2})});
    check_error([&] { onnx::load_bytes(uneven.bytes()); }, ErrorCode::ShapeMismatch, {"'un'", "[1, 2]"});
  }

  TEST_CASE("BatchNormalization and Softmax") {
    const Shape xs{2, 3, 4, 4};
    const auto sc = random_values(3, 1), bi = random_values(3, 2), mean = random_values(3, 3);
    std::vector<float> var = random_values(3, 4);
    for (float& v : var) v = std::abs(v) + 0.1f;
    const Model bn =
        one_node(node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, "bn", {attr_float("epsilon", 1e-3f)}), xs,
                 {tensor("s", {3}, sc), tensor("b", {3}, bi), tensor("m", {3}, mean), tensor("v", {3}, var)});
    check_against_builder(bn, xs, [&](Graph& g, Tensor x) {
      return g.batchnorm(x, g.constant("s", {3}, sc), g.constant("b", {3}, bi), g.constant("m", {3}, mean),
                         g.constant("v", {3}, var), {1e-3f});
    });
    check_against_builder(one_node(node("Softmax", {"x"}, {"y"}, "sm", {attr_int("axis", 1)}), xs), xs,
                          [](Graph& g, Tensor x) { return g.softmax(x, 1); });
    // Before opset 13 the default axis is 1 and the dimensions from it on are normalised as one.
    const auto [x, y] = run_model(one_node(node("Softmax", {"x"}, {"y"}), {2, 3, 4}, {}, 11), {2, 3, 4});
    for (int row = 0; row < 2; ++row) {
      double sum = 0;
      for (int i = 0; i < 12; ++i) sum += std::exp(x[row * 12 + i]);
      for (int i = 0; i < 12; ++i)
        CHECK(y[row * 12 + i] == doctest::Approx(std::exp(x[row * 12 + i]) / sum).epsilon(1e-5));
    }
  }

  TEST_CASE("Identity, Dropout and Constant pass values on") {
    Model m;
    Proto value = tensor("", {3}, {1.0f, 2.0f, 3.0f});
    m.nodes = {node("Constant", {}, {"k"}, "k", {attr_tensor("value", value)}),
               node("Identity", {"k"}, {"k2"}),
               node("Dropout", {"x"}, {"xd"}),
               node("Add", {"xd", "k2"}, {"s"}),
               node("Constant", {}, {"half"}, "half", {attr_float("value_float", 0.5f)}),
               node("Mul", {"s", "half"}, {"y"})};
    m.inputs = {value_info("x", {2, 3})};
    m.outputs = {value_info("y", {})};
    const auto [x, y] = run_model(m, {2, 3});
    for (std::size_t i = 0; i < x.size(); ++i)
      CHECK(y[i] == doctest::Approx((x[i] + static_cast<float>(i % 3 + 1)) * 0.5f));
  }

  TEST_CASE("Dropout: the mask output and training_mode") {
    const bool no = false, yes = true;
    const Proto off = raw_tensor("train", {}, BOOL, &no, 1), on = raw_tensor("train", {}, BOOL, &yes, 1);
    const Model m =
        one_node(node("Dropout", {"x", "ratio", "train"}, {"y", "mask"}), {2, 3}, {tensor("ratio", {}, {0.5f}), off});
    const auto [x, y] = run_model(m, {2, 3});
    CHECK(x == y);
    const Model training = one_node(node("Dropout", {"x", "", "train"}, {"y", "mask"}, "drop"), {2, 3}, {on});
    check_error([&] { onnx::load_bytes(training.bytes()); }, ErrorCode::Unsupported, {"'drop'", "training_mode"});
    // Training mode with ratio 0 drops nothing (torchvision's Swin exports its attention dropout so).
    const Model none_dropped = one_node(node("Dropout", {"x", "ratio", "train"}, {"y"}, "drop"), {2, 3},
                                        {tensor("ratio", {}, {0.0f}), on});
    const auto [x0, y0] = run_model(none_dropped, {2, 3});
    CHECK(x0 == y0);
    const Model dynamic = one_node(node("Dropout", {"x", "", "x"}, {"y"}, "drop"), {2, 3});
    check_error([&] { onnx::load_bytes(dynamic.bytes()); }, ErrorCode::Unsupported, {"'drop'", "'x'", "run-time"});
  }

  TEST_CASE("shape arithmetic folds at import: Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]))") {
    const std::int64_t zero = 0;
    for (const std::int64_t opset : {11, 13, 17}) {
      CAPTURE(opset);
      Model m;
      const bool axes_input = opset >= 13;
      m.nodes = {node("Shape", {"x"}, {"s"}), node("Gather", {"s", "i0"}, {"n"}, "g", {attr_int("axis", 0)}),
                 axes_input ? node("Unsqueeze", {"n", "axes"}, {"n1"})
                            : node("Unsqueeze", {"n"}, {"n1"}, "u", {attr_ints("axes", {0})}),
                 node("Concat", {"n1", "minus1"}, {"shape"}, "cat", {attr_int("axis", 0)}),
                 node("Reshape", {"x", "shape"}, {"y"})};
      m.initializers = {raw_tensor("i0", {}, INT64, &zero, 8), int64_tensor("minus1", {-1})};
      if (axes_input) m.initializers.push_back(int64_tensor("axes", {0}));
      m.inputs = {value_info("x", {2, 3, 4})};
      m.outputs = {value_info("y", {})};
      m.opset = opset;
      check_against_builder(m, {2, 3, 4}, [](Graph& g, Tensor x) { return g.reshape(x, {2, 12}); });
    }
  }

  TEST_CASE("shape arithmetic folds at import: Slice, Squeeze, Range, Less, ConstantOfShape, Where, Size, Cast") {
    const std::int64_t zero = 0, one = 1, two = 2;
    const float ones = 1.0f;
    Model m;  // y = x * (column < columns / 2) + size(x), every factor computed from x's shape
    m.nodes = {
        node("Shape", {"x"}, {"s"}),
        node("Slice", {"s", "one", "two"}, {"cols1"}),
        node("Squeeze", {"cols1", "axes0"}, {"cols"}),
        node("Range", {"zero", "cols", "one_s"}, {"r"}),
        node("Div", {"cols", "two_s"}, {"half"}),
        node("Less", {"r", "half"}, {"keep"}),
        node("ConstantOfShape", {"cols1"}, {"ones"}, "k", {attr_tensor("value", raw_tensor("", {1}, FLOAT, &ones, 4))}),
        node("Sub", {"ones", "ones"}, {"zeros"}),
        node("Where", {"keep", "ones", "zeros"}, {"w"}),
        node("Size", {"x"}, {"n"}),
        node("Cast", {"n"}, {"nf"}, "cast", {attr_int("to", FLOAT)}),
        node("Mul", {"x", "w"}, {"xw"}),
        node("Add", {"xw", "nf"}, {"y"})};
    m.initializers = {int64_tensor("one", {1}),
                      int64_tensor("two", {2}),
                      int64_tensor("axes0", {0}),
                      raw_tensor("zero", {}, INT64, &zero, 8),
                      raw_tensor("one_s", {}, INT64, &one, 8),
                      raw_tensor("two_s", {}, INT64, &two, 8)};
    m.inputs = {value_info("x", {3, 6})};
    m.outputs = {value_info("y", {})};
    const auto [x, y] = run_model(m, {3, 6});
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(y[i] == doctest::Approx((i % 6 < 3 ? x[i] : 0.0f) + 18.0f));
  }

  TEST_CASE("shape arithmetic folds at import: Mod, Not, ScatterND (as torch writes Swin's window masks)") {
    const std::int64_t zero = 0, one = 1, two = 2, four = 4, rows[] = {1, 4};
    const std::vector<float> updates{1.0f, 2.0f};
    Model m;  // y = x * ((column odd) + [0, 1, 0, 0, 2, 0]) + ((1 - columns) mod 4)
    m.nodes = {node("Shape", {"x"}, {"s"}),
               node("Gather", {"s", "one"}, {"cols"}),
               node("Range", {"zero", "cols", "one"}, {"r"}),
               node("Mod", {"r", "two"}, {"r2"}),
               node("Equal", {"r2", "zero"}, {"even"}),
               node("Not", {"even"}, {"odd"}),
               node("Cast", {"odd"}, {"oddf"}, "c", {attr_int("to", FLOAT)}),
               node("Unsqueeze", {"cols", "axes0"}, {"cols1"}),
               node("ConstantOfShape", {"cols1"}, {"zeros"}),
               node("ScatterND", {"zeros", "where", "updates"}, {"scattered"}),
               node("Add", {"oddf", "scattered"}, {"w"}),
               node("Sub", {"one", "cols"}, {"neg"}),
               node("Mod", {"neg", "four"}, {"pad"}),
               node("Cast", {"pad"}, {"padf"}, "c2", {attr_int("to", FLOAT)}),
               node("Mul", {"x", "w"}, {"xw"}),
               node("Add", {"xw", "padf"}, {"y"})};
    m.initializers = {raw_tensor("zero", {}, INT64, &zero, 8),
                      raw_tensor("one", {}, INT64, &one, 8),
                      raw_tensor("two", {}, INT64, &two, 8),
                      raw_tensor("four", {}, INT64, &four, 8),
                      int64_tensor("axes0", {0}),
                      raw_tensor("where", {2, 1}, INT64, rows, 16),
                      tensor("updates", {2}, updates)};
    m.inputs = {value_info("x", {3, 6})};
    m.outputs = {value_info("y", {})};
    const auto [x, y] = run_model(m, {3, 6});
    const float w[] = {0, 2, 0, 1, 2, 1};
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(y[i] == doctest::Approx(x[i] * w[i % 6] + 3.0f));
  }

  TEST_CASE("shape arithmetic folds at import: Transpose of integer values (torch's computed pads); float ones stay") {
    Model m;
    const std::int64_t pairs[] = {0, 1, 2, 0};  // [[begin0, begin1], [end0, end1]] transposed to ONNX's order
    const std::vector<float> w = random_values(6, 3);
    m.initializers = {raw_tensor("pairs", {2, 2}, INT64, pairs, sizeof pairs), int64_tensor("flat", {4}),
                      tensor("w", {2, 3}, w)};
    m.nodes = {node("Transpose", {"pairs"}, {"t"}, "transpose_pads", {attr_ints("perm", {1, 0})}),
               node("Reshape", {"t", "flat"}, {"pads"}, "flatten_pads"), node("Pad", {"x", "pads"}, {"y"}, "pad"),
               node("Transpose", {"w"}, {"wt"}, "transpose_weights")};
    m.inputs = {value_info("x", {3, 4})};
    m.outputs = {value_info("y", {}), value_info("wt", {})};
    const Graph g = onnx::load_bytes(m.bytes());
    CHECK(g.shape(g.outputs()[0].second) == Shape{4, 6});  // pads [0, 2, 1, 0]
    REQUIRE(g.nodes().size() == 2);  // the pad, and the weights' transpose as a node
    CHECK(g.nodes()[0].op == OpKind::Pad);
    CHECK(g.nodes()[1].op == OpKind::Transpose);
  }

  TEST_CASE("run-time integers and masks: Gather, Less, Equal, Not, And, Or, Where, Cast; int64 inputs") {
    Model m;
    const std::int64_t zero = 0;
    const std::vector<float> table = random_values(18, 5);
    m.initializers = {raw_tensor("zero", {}, INT64, &zero, 8), tensor("table", {6, 3}, table),
                      int64_tensor("three", {3})};
    m.nodes = {node("Gather", {"x", "zero"}, {"cls"}, "class_token", {attr_int("axis", 1)}),
               node("Gather", {"table", "ids"}, {"emb"}, "embedding"),
               node("Less", {"ids", "three"}, {"small"}, "less"),
               node("Not", {"small"}, {"big"}, "not"),
               node("Or", {"small", "big"}, {"all"}, "or"),
               node("And", {"small", "big"}, {"none"}, "and"),
               node("Cast", {"small"}, {"small_f"}, "to_float", {attr_int("to", FLOAT)}),
               node("Where", {"small", "ids", "three"}, {"clamped"}, "where"),
               node("Cast", {"x"}, {"xi"}, "to_int", {attr_int("to", INT64)}),
               node("Equal", {"ids", "three"}, {"eq"}, "equal")};
    m.inputs = {value_info("x", {2, 5, 3}), value_info("ids", {4}, INT64)};
    for (const char* out : {"cls", "emb", "all", "none", "small_f", "clamped", "xi", "eq"})
      m.outputs.push_back(value_info(out, {}));
    const Graph g = onnx::load_bytes(m.bytes());
    CHECK(g.dtype(g.inputs()[1]) == DType::i64);
    Executable exe = Device::open("ref").compile(g);
    const std::vector<float> x = random_values(30, 9);
    exe.set_input("x", x);
    const std::vector<std::int64_t> ids{0, 5, -1, 3};
    exe.set_input_bytes("ids", std::as_bytes(std::span(ids)));
    exe.run();
    CHECK(exe.output_desc("cls").shape == Shape{2, 3});  // the scalar index drops the axis
    for (std::size_t n = 0; n < 2; ++n)
      for (std::size_t c = 0; c < 3; ++c) CHECK(exe.output("cls")[n * 3 + c] == x[n * 15 + c]);
    const std::size_t rows[] = {0, 5, 5, 3};
    for (std::size_t r = 0; r < 4; ++r)
      for (std::size_t c = 0; c < 3; ++c) CHECK(exe.output("emb")[r * 3 + c] == table[rows[r] * 3 + c]);
    CHECK(exe.output("all") == std::vector<float>{1, 1, 1, 1});
    CHECK(exe.output("none") == std::vector<float>{0, 0, 0, 0});
    CHECK(exe.output("small_f") == std::vector<float>{1, 0, 1, 0});
    CHECK(exe.output_desc("clamped").dtype == DType::i64);
    CHECK(exe.output("clamped") == std::vector<float>{0, 3, -1, 3});
    CHECK(exe.output("eq") == std::vector<float>{0, 0, 0, 1});
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(exe.output("xi")[i] == std::trunc(x[i]));
    CHECK(check_round_trip(g, 3));  // and each op exported and read back
  }

  TEST_CASE("values that depend on run-time data are refused, naming the node") {
    const Model cast = one_node(node("Cast", {"x"}, {"y"}, "to_uint8", {attr_int("to", 2)}), {2});
    check_error([&] { onnx::load_bytes(cast.bytes()); }, ErrorCode::Unsupported,
                {"'to_uint8'", "uint8", "int64, int32 or bool", "run-time data"});
    const Model range = one_node(node("Range", {"x", "x", "x"}, {"y"}, "range"), {1});
    check_error([&] { onnx::load_bytes(range.bytes()); }, ErrorCode::Unsupported,
                {"'range'", "input 'x' depends on run-time data", "Range"});
    const Model reshape = one_node(node("Reshape", {"x", "x"}, {"y"}, "r"), {2});
    check_error([&] { onnx::load_bytes(reshape.bytes()); }, ErrorCode::Unsupported, {"'r'", "'x'", "run-time data"});
    const Model huge = one_node(node("ConstantOfShape", {"big"}, {"y"}, "fill"), {2}, {int64_tensor("big", {1 << 30})});
    check_error([&] { onnx::load_bytes(huge.bytes()); }, ErrorCode::Unsupported, {"'fill'", "2^22"});
    const Model oob =
        one_node(node("Gather", {"s", "i"}, {"y"}, "g"), {2}, {int64_tensor("s", {4, 5}), int64_tensor("i", {2})});
    check_error([&] { onnx::load_bytes(oob.bytes()); }, ErrorCode::InvalidArgument, {"'g'", "index 2"});
  }

  TEST_CASE("Squeeze and Unsqueeze of run-time data: axes as an attribute, then as input 1 from opset 13") {
    const Shape xs{2, 1, 3};
    check_against_builder(one_node(node("Squeeze", {"x"}, {"y"}, "sq", {attr_ints("axes", {1})}), xs, {}, 11), xs,
                          [](Graph& g, Tensor x) {
                            return g.reshape(x, {2, 3});
                          });
    check_against_builder(one_node(node("Squeeze", {"x", "a"}, {"y"}), xs, {int64_tensor("a", {-2})}, 13), xs,
                          [](Graph& g, Tensor x) {
                            return g.reshape(x, {2, 3});
                          });
    check_against_builder(one_node(node("Squeeze", {"x"}, {"y"}), xs, {}, 17), xs, [](Graph& g, Tensor x) {
      return g.reshape(x, {2, 3});
    });
    check_against_builder(one_node(node("Unsqueeze", {"x", "a"}, {"y"}), xs, {int64_tensor("a", {0, 4})}, 15), xs,
                          [](Graph& g, Tensor x) {
                            return g.reshape(x, {1, 2, 1, 3, 1});
                          });
    const Model moved = one_node(node("Unsqueeze", {"x"}, {"y"}, "u", {attr_ints("axes", {0})}), xs, {}, 13);
    check_error([&] { onnx::load_bytes(moved.bytes()); }, ErrorCode::InvalidArgument, {"'u'", "opset 13"});
    const Model not_one = one_node(node("Squeeze", {"x", "a"}, {"y"}, "sq"), xs, {int64_tensor("a", {0})});
    check_error([&] { onnx::load_bytes(not_one.bytes()); }, ErrorCode::InvalidArgument, {"'sq'", "not 1"});
  }

  TEST_CASE("opsets 7 to 23 load; others are refused, naming the opset") {
    for (const std::int64_t opset : {7, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}) {
      CAPTURE(opset);
      CHECK_NOTHROW(onnx::load_bytes(one_node(node("Relu", {"x"}, {"y"}), {2}, {}, opset).bytes()));
    }
    const Model newer = one_node(node("Relu", {"x"}, {"y"}), {2}, {}, 24);
    check_error([&] { onnx::load_bytes(newer.bytes()); }, ErrorCode::Unsupported, {"opset 24", "7 to 23"});
  }

  TEST_CASE("float16 models") {
    Model m = one_node(node("Add", {"x", "b"}, {"y"}), {2, 2});
    m.inputs = {value_info("x", {2, 2}, FLOAT16)};
    Proto b;
    b.varint(1, 2).varint(2, FLOAT16).string(8, "b");
    for (float v : {1.0f, -2.0f}) b.varint(5, f32_to_f16(v));  // 16-bit values travel in int32_data
    m.initializers = {b};
    const Graph g = onnx::load_bytes(m.bytes());
    CHECK(g.dtype(g.outputs()[0].second) == DType::f16);
    const auto y = run_ref(g, {{"x", {1.0f, 1.0f, 0.5f, 0.5f}}}, "y");
    CHECK(y == std::vector<float>{2.0f, -1.0f, 1.5f, -1.5f});
  }

  TEST_CASE("inputs: names, symbolic batch, shape overrides, initializers listed as inputs") {
    Model m = one_node(node("Relu", {"x"}, {"y"}), {-1, 3, 8});
    m.initializers = {tensor("unused", {1}, {1.0f})};
    m.inputs.push_back(value_info("unused", {1}));  // IR < 4 lists initializers as inputs too
    CHECK(onnx::load_bytes(m.bytes()).shape(Tensor{0}) == Shape{1, 3, 8});
    onnx::LoadOptions batch5;
    batch5.batch = 5;
    const Graph g = onnx::load_bytes(m.bytes(), batch5);
    REQUIRE(g.inputs().size() == 1);
    CHECK(g.info(g.inputs()[0]).name == "x");
    CHECK(g.shape(g.inputs()[0]) == Shape{5, 3, 8});
    CHECK(g.outputs()[0].first == "y");
    onnx::LoadOptions options;
    options.input_shapes["x"] = {2, 3, 9};
    const Graph overridden = onnx::load_bytes(m.bytes(), options);
    CHECK(overridden.shape(overridden.inputs()[0]) == Shape{2, 3, 9});
    options.input_shapes["z"] = {1};
    check_error([&] { onnx::load_bytes(m.bytes(), options); }, ErrorCode::InvalidArgument, {"'z'"});
    onnx::LoadOptions batch0;
    batch0.batch = 0;
    check_error([&] { onnx::load_bytes(m.bytes(), batch0); }, ErrorCode::InvalidArgument, {"batch 0"});
    Model sym = one_node(node("Relu", {"x"}, {"y"}), {1, -1});
    check_error([&] { onnx::load_bytes(sym.bytes()); }, ErrorCode::InvalidArgument,
                {"input 'x'", "dimension 1", "'batch'"});
    Model ints = one_node(node("Relu", {"x"}, {"y"}), {2});
    ints.inputs = {value_info("x", {2}, INT64)};  // an int64 input loads; arithmetic on it is refused
    check_error([&] { onnx::load_bytes(ints.bytes()); }, ErrorCode::Unsupported, {"relu", "operand 'x' is i64"});
    Model doubles = one_node(node("Relu", {"x"}, {"y"}), {2});
    doubles.inputs = {value_info("x", {2}, 11)};  // DOUBLE
    check_error([&] { onnx::load_bytes(doubles.bytes()); }, ErrorCode::Unsupported, {"input 'x'", "double"});
  }

  TEST_CASE("every unsupported node is listed in one error") {
    Model m;
    m.nodes = {node("Relu", {"x"}, {"a"}, "ok"), node("LSTM", {"a"}, {"b"}, "lstm_1"), node("Relu", {"b"}, {"c"}),
               node("Resize", {"c"}, {"d"}), node("FusedConv", {"d"}, {"y"}, "fused", {}, "com.microsoft")};
    m.inputs = {value_info("x", {1, 4})};
    m.outputs = {value_info("y", {})};
    check_error([&] { onnx::load_bytes(m.bytes()); }, ErrorCode::Unsupported,
                {"3 nodes", "'lstm_1' (LSTM)", "#3 (Resize)", "'fused' (com.microsoft:FusedConv)"});
  }

  TEST_CASE("malformed graphs name the node and the value") {
    Model m = one_node(node("Relu", {"nope"}, {"y"}, "r1"), {2});
    check_error([&] { onnx::load_bytes(m.bytes()); }, ErrorCode::InvalidArgument, {"'r1'", "'nope'"});
    Model twice;
    twice.nodes = {node("Relu", {"x"}, {"y"}, "a"), node("Relu", {"x"}, {"y"}, "b")};
    twice.inputs = {value_info("x", {2})};
    twice.outputs = {value_info("y", {})};
    check_error([&] { onnx::load_bytes(twice.bytes()); }, ErrorCode::InvalidArgument,
                {"'b'", "'y'", "already defined"});
    Model no_output = one_node(node("Relu", {"x"}, {"y"}), {2});
    no_output.outputs = {value_info("z", {})};
    check_error([&] { onnx::load_bytes(no_output.bytes()); }, ErrorCode::InvalidArgument, {"'z'"});
    Model short_data = one_node(node("Add", {"x", "b"}, {"y"}), {3}, {tensor("b", {3}, {1.0f, 2.0f})});
    check_error([&] { onnx::load_bytes(short_data.bytes()); }, ErrorCode::InvalidArgument,
                {"'b'", "3 elements", "8 bytes"});
    Model old = one_node(node("Relu", {"x"}, {"y"}), {2}, {}, 6);
    check_error([&] { onnx::load_bytes(old.bytes()); }, ErrorCode::Unsupported, {"opset 6"});
    Proto external = tensor("w", {2}, {1.0f, 2.0f});
    external.varint(14, 1);
    Model ext = one_node(node("Add", {"x", "w"}, {"y"}), {2}, {external});
    check_error([&] { onnx::load_bytes(ext.bytes()); }, ErrorCode::Unsupported, {"'w'", "external"});
  }

  TEST_CASE("wire format errors name the byte offset") {
    const std::vector<std::byte> empty;
    check_error([&] { onnx::load_bytes(empty); }, ErrorCode::InvalidArgument, {"no graph"});
    const std::vector<std::byte> bad_varint(11, std::byte{0xff});
    check_error([&] { onnx::load_bytes(bad_varint); }, ErrorCode::InvalidArgument,
                {"varint at byte 0", "longer than 10"});
    const std::vector<std::byte> group{std::byte{0x0b}};  // field 1, wire type 3 (start group)
    check_error([&] { onnx::load_bytes(group); }, ErrorCode::InvalidArgument, {"byte 0", "wire type 3"});
    const std::vector<std::byte> long_field{std::byte{0x3a}, std::byte{0x05},
                                            std::byte{0x00}};  // graph: 5 bytes, 1 present
    check_error([&] { onnx::load_bytes(long_field); }, ErrorCode::InvalidArgument,
                {"byte 0", "5 bytes", "past the end"});
    const std::vector<std::byte> wrong_type{std::byte{0x3d}, std::byte{0}, std::byte{0}, std::byte{0},
                                            std::byte{0}};  // graph as fixed32
    check_error([&] { onnx::load_bytes(wrong_type); }, ErrorCode::InvalidArgument, {"graph", "fixed32"});
  }

  TEST_CASE("every truncation is an error and corrupted bytes never crash") {
    Model m;
    m.nodes = {node("Conv", {"x", "w", "b"}, {"c"}, "conv", {attr_ints("pads", {1, 1, 1, 1})}),
               node("Relu", {"c"}, {"r"}), node("GlobalAveragePool", {"r"}, {"p"}), node("Flatten", {"p"}, {"f"}),
               node("Gemm", {"f", "fw", "fb"}, {"y"}, "fc", {attr_int("transB", 1)})};
    m.initializers = {tensor("w", {4, 2, 3, 3}, random_values(72, 1)), tensor("b", {4}, random_values(4, 2), false),
                      tensor("fw", {3, 4}, random_values(12, 3)), tensor("fb", {3}, random_values(3, 4))};
    m.inputs = {value_info("x", {-1, 2, 5, 5})};
    m.outputs = {value_info("y", {-1, 3})};
    const auto bytes = m.bytes();
    REQUIRE(onnx::load_bytes(bytes).nodes().size() == 5);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      CAPTURE(n);
      try {
        onnx::load_bytes(std::span(bytes).first(n));
        FAIL("a model cut to " << n << " of " << bytes.size() << " bytes loaded");
      } catch (const Error& e) {
        REQUIRE(e.code() == ErrorCode::InvalidArgument);
      }
    }
    // Each byte replaced by a few values: porta::Error or a valid graph, nothing else.
    int errors = 0, graphs = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      for (const std::uint8_t v : {0x00, 0x7f, 0x80, 0xff}) {
        auto copy = bytes;
        copy[i] = std::byte{v};
        try {
          onnx::load_bytes(copy);
          ++graphs;
        } catch (const Error&) {
          ++errors;
        }
      }
    }
    CHECK(errors > 0);
    CHECK(graphs > 0);  // e.g. changed weight bytes
  }

  TEST_CASE("export: the models read back as the same computation") {
    for (const char* name : {"resnet50", "efficientnet-b0", "mobilenet-v2"}) {
      CAPTURE(name);
      CHECK(check_round_trip(models::build(name, {.batch = 2, .resolution = 32, .classes = 10}), 3));
    }
  }

  TEST_CASE("export: GELU in both forms, alone and as a gemm's epilogue, and the transformers read back") {
    Graph g;
    const Tensor x = g.input("x", {4, 6});
    std::vector<float> w(6 * 5);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
    g.output("exact", g.gelu(x, {}, "exact"));
    g.output("tanh", g.gelu(x, {.tanh_approximation = true}, "tanh"));
    g.output("gemm", g.gemm(x, g.constant("w", {6, 5}, w), {.activation = Activation::Gelu}, {}, "gemm"));
    CHECK(check_round_trip(g, 5));
    // Two encoder layers hold every op of the twelve, in a fifth of the bytes to write and read back.
    CHECK(check_round_trip(models::build("bert-base", {.batch = 2, .seq = 5, .layers = 2}), 3));
    CHECK(check_round_trip(models::build("vit-b16", {.resolution = 32, .classes = 10, .layers = 2}), 3));
  }

  TEST_CASE("export: random graphs read back as the same computation, or say what ONNX cannot hold") {
    int round_tripped = 0, unsupported = 0;
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
      CAPTURE(seed);
      const auto built = graph_gen::build(graph_gen::generate(seed));
      REQUIRE(built);
      const Graph& g = built->graph;
      const std::vector<Tensor> inputs = g.inputs();
      if (std::any_of(inputs.begin(), inputs.end(), [&](Tensor t) { return !g.info(t).input_strides.empty(); }))
        continue;  // an export takes dense inputs: strided ones would get other values
      try {
        round_tripped += check_round_trip(g, seed);
      } catch (const Error& e) {
        REQUIRE_MESSAGE(e.code() == ErrorCode::Unsupported, e.what());
        CHECK(std::string(e.what()).find("ONNX export: node '") == 0);
        ++unsupported;
      }
    }
    MESSAGE(round_tripped << " random graphs round-tripped, " << unsupported << " hold what the export cannot write");
    CHECK(round_tripped >= 100);
  }

  TEST_CASE("export: an unwritable path is IoError") {
    check_error([] { onnx::save(models::build("mobilenet-v2", {.resolution = 32}), "/nonexistent/m.onnx"); },
                ErrorCode::IoError, {"/nonexistent/m.onnx"});
  }

  TEST_CASE("files: initializers in external data are read from beside the model") {
    const auto folder = std::filesystem::temp_directory_path() / ("porta_test_onnx_external_" + std::to_string(::getpid()));
    std::filesystem::remove_all(folder);  // left by a run that failed
    std::filesystem::create_directories(folder / "weights");
    const std::vector<float> w = {0.5f, -1.25f, 3.0f};
    {
      std::ofstream data(folder / "weights" / "w.bin", std::ios::binary);
      data << "16 bytes before.";  // the tensor starts at an offset
      data.write(reinterpret_cast<const char*>(w.data()), static_cast<std::streamsize>(w.size() * sizeof(float)));
    }
    // An initializer of dims {3} whose bytes lie in `location`, from `offset`, `length` long (empty: unset).
    const auto model = [&](const std::string& location, const std::string& offset, const std::string& length) {
      Proto t;
      t.varint(1, 3).varint(2, FLOAT).string(8, "w");
      for (const auto& [key, value] : {std::pair{"location", location}, {"offset", offset}, {"length", length}}) {
        Proto entry;
        if (!value.empty()) t.message(13, entry.string(1, key).string(2, value));
      }
      t.varint(14, 1);  // data_location EXTERNAL
      const auto path = folder / "model.onnx";
      const Model m = one_node(node("Add", {"x", "w"}, {"y"}), {3}, {t});
      const std::vector<std::byte> bytes = m.bytes();
      std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                 static_cast<std::streamsize>(bytes.size()));
      return path;
    };
    const std::vector<float> x = {1.0f, 2.0f, 3.0f};
    for (const std::string length : {"12", ""}) {  // without a length, to the end of the file
      CAPTURE(length);
      const std::vector<float> y = run_ref(onnx::load(model("weights/w.bin", "16", length)), {{"x", x}}, "y");
      CHECK(y == std::vector<float>{1.5f, 0.75f, 6.0f});
    }
    check_error([&] { onnx::load(model("weights/missing.bin", "16", "12")); }, ErrorCode::IoError,
                {"'w'", "missing.bin", "does not exist"});
    check_error([&] { onnx::load(model("../w.bin", "0", "12")); }, ErrorCode::InvalidArgument,
                {"'w'", "outside the model's folder"});
    check_error([&] { onnx::load(model((folder / "weights" / "w.bin").string(), "16", "12")); },
                ErrorCode::InvalidArgument, {"'w'", "outside the model's folder"});
    check_error([&] { onnx::load(model("weights/w.bin", "20", "12")); }, ErrorCode::InvalidArgument,
                {"'w'", "reads 12 bytes from byte 20", "holds 28"});
    check_error([&] { onnx::load(model("weights/w.bin", "16", "8")); }, ErrorCode::InvalidArgument,
                {"'w'", "12 bytes of float", "8 bytes long"});
    check_error([&] { onnx::load(model("weights/w.bin", "8", "")); }, ErrorCode::InvalidArgument,
                {"'w'", "12 bytes of float", "20 bytes long"});  // no length: the rest of the file
    check_error([&] { onnx::load(model("weights", "0", "")); }, ErrorCode::InvalidArgument, {"'w'", "not a file"});
    std::filesystem::create_directory_symlink(std::filesystem::temp_directory_path(), folder / "elsewhere");
    check_error([&] { onnx::load(model("elsewhere/w.bin", "0", "12")); }, ErrorCode::InvalidArgument,
                {"'w'", "outside the model's folder"});
    check_error([&] { onnx::load(model("weights/w.bin", "sixteen", "12")); }, ErrorCode::InvalidArgument,
                {"'w'", "offset 'sixteen'"});
    check_error([&] { onnx::load(model("", "16", "12")); }, ErrorCode::InvalidArgument, {"'w'", "no location"});
    std::filesystem::remove_all(folder);
  }

  TEST_CASE("files: missing and directories are IoError") {
    check_error([] { onnx::load("/nonexistent/model.onnx"); }, ErrorCode::IoError, {"/nonexistent/model.onnx"});
    check_error([] { onnx::load(std::filesystem::temp_directory_path()); }, ErrorCode::IoError, {"directory"});
    const auto path = std::filesystem::temp_directory_path() / "porta_test_onnx_garbage.onnx";
    std::ofstream(path) << "not a model";
    check_error([&] { onnx::load(path); }, ErrorCode::InvalidArgument, {"porta_test_onnx_garbage.onnx"});
    std::filesystem::remove(path);
  }
}
