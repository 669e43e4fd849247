// autodiff::gradients: every backward rule against central finite differences on ref (the loss
// summed in double on the host), and the same gradients on every device under test against ref.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <span>
#include <string>

#include "test_util.hpp"

namespace porta::test {
namespace {

// A trainable input: its name, shape and the range its random values are drawn from.
struct Param {
  std::string name;
  Shape shape;
  float lo = -1.0f, hi = 1.0f;
};

using Build = std::function<Tensor(Graph&, const std::vector<Tensor>&)>;

std::size_t numel(const Shape& s) {
  std::size_t n = 1;
  for (auto d : s) n *= static_cast<std::size_t>(d);
  return n;
}

std::vector<float> random_values(std::size_t n, float lo, float hi, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// 0, step, 2 step, ... (n values) in a fixed random order.
std::vector<float> shuffled_steps(std::size_t n, float step) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = step * static_cast<float>(i);
  std::shuffle(v.begin(), v.end(), std::mt19937(5));
  return v;
}

double sum(const std::vector<float>& v) {
  double s = 0.0;
  for (const float x : v) s += x;
  return s;
}

// The graph under test: y = build(params), loss = y * seed (a random constant, so that every
// element of y weighs differently), and the gradient of sum(loss) w.r.t. every parameter.
struct Problem {
  Graph graph;
  std::vector<std::vector<float>> values;

  Problem(const std::vector<Param>& params, const Build& build, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<Tensor> inputs;
    for (const Param& p : params) {
      inputs.push_back(graph.input(p.name, p.shape));
      values.push_back(random_values(numel(p.shape), p.lo, p.hi, rng));
    }
    const Tensor y = build(graph, inputs);
    const Shape shape = graph.shape(y);
    const Tensor weights = graph.constant("seed", shape, random_values(numel(shape), 0.5f, 1.5f, rng));
    const Tensor loss = graph.mul(y, weights);
    graph.output("loss", loss);
    const std::vector<Tensor> grads = autodiff::gradients(graph, loss, inputs);
    for (std::size_t i = 0; i < params.size(); ++i) graph.output(params[i].name + ".grad", grads[i]);
  }


  void set(Executable& exe, const std::vector<Param>& params) const {
    for (std::size_t i = 0; i < params.size(); ++i) exe.set_input(params[i].name, values[i]);
  }
};

// Central differences of sum(loss) for every element of every parameter, against the graph's
// gradients on ref; then the gradients on every device under test against ref's.
void check_gradients(const std::vector<Param>& params, const Build& build, unsigned seed = 1) {
  Problem problem(params, build, seed);
  Executable ref = Device::open("ref").compile(problem.graph);
  problem.set(ref, params);
  ref.run();
  std::vector<std::vector<float>> grads;  // all read first: the differences below move the inputs
  for (const Param& p : params) grads.push_back(ref.output(p.name + ".grad"));
  constexpr float eps = 1e-2f;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::vector<float>& analytic = grads[i];
    REQUIRE(analytic.size() == problem.values[i].size());
    std::vector<float> v = problem.values[i];
    for (std::size_t j = 0; j < v.size(); ++j) {
      const float keep = v[j];
      const auto loss_at = [&](float x) {
        v[j] = x;
        ref.set_input(params[i].name, v);
        ref.run();
        return sum(ref.output("loss"));
      };
      const double numeric = (loss_at(keep + eps) - loss_at(keep - eps)) / (2.0 * eps);
      v[j] = keep;
      INFO(params[i].name << "[" << j << "]: analytic " << analytic[j] << ", numeric " << numeric);
      CHECK(std::abs(analytic[j] - numeric) <= 2e-3 + 1e-2 * std::abs(numeric));
    }
    ref.set_input(params[i].name, v);
  }
  ref.run();
  for (const std::string& spec : devices_under_test()) {
    const std::optional<Device> device = open_or_skip(spec);
    if (!device) continue;
    std::optional<Executable> compiled;
    try {
      compiled = device->compile(problem.graph);
    } catch (const Error& e) {  // a forward op the device lacks (its unsupported_reason says which)
      if (e.code() != ErrorCode::Unsupported) throw;
      MESSAGE("skipping " << spec << ": " << std::string(e.what()));
      continue;
    }
    Executable& exe = *compiled;
    problem.set(exe, params);
    exe.run();
    for (const Param& p : params) {
      const std::vector<float> want = ref.output(p.name + ".grad"), got = exe.output(p.name + ".grad");
      for (std::size_t j = 0; j < want.size(); ++j) {
        INFO(p.name << ".grad[" << j << "] on " << spec << ": " << got[j] << ", ref " << want[j]);
        CHECK(std::abs(got[j] - want[j]) <= 1e-5 + 1e-4 * std::abs(want[j]));
      }
    }
  }
}

}  // namespace

TEST_SUITE("autodiff") {
  TEST_CASE("matmul: plain, transposed, batch-broadcast and vector operands") {
    check_gradients({{"a", {3, 4}}, {"b", {4, 5}}}, [](Graph& g, const auto& t) { return g.matmul(t[0], t[1]); });
    check_gradients({{"a", {2, 1, 4, 3}}, {"b", {3, 5, 4}}},
                    [](Graph& g, const auto& t) { return g.matmul(t[0], t[1], {true, true}); });
    check_gradients({{"a", {4}}, {"b", {2, 4, 3}}}, [](Graph& g, const auto& t) { return g.matmul(t[0], t[1]); });
    check_gradients({{"a", {1, 3, 4}}, {"b", {4}}}, [](Graph& g, const auto& t) { return g.matmul(t[0], t[1]); });
  }

  TEST_CASE("gemm: transposes, alpha, beta, broadcast C and fused activations") {
    for (const Activation a : {Activation::None, Activation::Sigmoid, Activation::Tanh, Activation::Silu}) {
      CAPTURE(to_string(a));
      check_gradients({{"a", {4, 3}}, {"b", {5, 4}}, {"c", {5}}}, [a](Graph& g, const auto& t) {
        return g.gemm(t[0], t[1], {true, true, 0.5f, 2.0f, a}, t[2]);
      });
    }
    check_gradients({{"a", {1, 3}}, {"b", {3, 2}}, {"c", {1, 1}}},
                    [](Graph& g, const auto& t) { return g.gemm(t[0], t[1], {}, t[2]); });
  }

  TEST_CASE("add, sub, mul and div with broadcasting") {
    const std::vector<Param> ps = {{"a", {2, 3, 1}}, {"b", {3, 4}, 0.5f, 2.0f}};
    check_gradients(ps, [](Graph& g, const auto& t) { return g.add(t[0], t[1]); });
    check_gradients(ps, [](Graph& g, const auto& t) { return g.sub(t[0], t[1]); });
    check_gradients(ps, [](Graph& g, const auto& t) { return g.mul(t[0], t[1]); });
    check_gradients(ps, [](Graph& g, const auto& t) { return g.div(t[0], t[1]); });
    check_gradients({{"a", {1}}, {"b", {2, 1, 3}, 0.5f, 2.0f}},
                    [](Graph& g, const auto& t) { return g.div(t[0], t[1]); });
  }

  TEST_CASE("a tensor feeding several nodes sums their gradients") {
    check_gradients({{"x", {3, 2}}}, [](Graph& g, const auto& t) { return g.add(g.mul(t[0], t[0]), g.tanh(t[0])); });
  }

  TEST_CASE("sigmoid, tanh and silu") {
    check_gradients({{"x", {2, 5}, -3.0f, 3.0f}},
                    [](Graph& g, const auto& t) { return g.silu(g.tanh(g.sigmoid(g.silu(t[0])))); });
  }

  TEST_CASE("softmax along any axis") {
    for (const std::int64_t axis : {0, 1, -1}) {
      CAPTURE(axis);
      check_gradients({{"x", {2, 3, 4}, -2.0f, 2.0f}},
                      [axis](Graph& g, const auto& t) { return g.softmax(t[0], axis); });
    }
  }

  TEST_CASE("reshape, flatten, transpose and concat") {
    check_gradients({{"x", {2, 3, 4}}}, [](Graph& g, const auto& t) {
      return g.reshape(g.transpose(g.flatten(g.reshape(t[0], {4, 3, 2}), 1), {1, 0}), {3, 8});
    });
    for (const std::int64_t axis : {1, 2}) {
      CAPTURE(axis);
      check_gradients({{"a", {2, 1, 3}}, {"b", {2, 4, 3}}}, [axis](Graph& g, const auto& t) {
        const Tensor b = axis == 1 ? t[1] : g.reshape(t[1], {2, 3, 4});
        const Tensor a = axis == 1 ? t[0] : g.reshape(t[0], {2, 3, 1});
        const Tensor xs[] = {b, a, b};
        return g.concat(xs, axis);
      });
    }
  }

  TEST_CASE("cast: the gradient is cast back to each input's dtype") {
    Graph g;
    const Tensor x = g.input("x", {4});
    const std::vector<float> seed = {0.1f, -2.7f, 3.14159f, 1e-3f};
    const Tensor y = g.mul(g.cast(g.cast(x, DType::f16), DType::f32), g.constant("seed", {4}, seed));
    const Tensor wrt[] = {x};
    const std::vector<Tensor> d = autodiff::gradients(g, y, wrt);
    CHECK(g.dtype(d[0]) == DType::f32);
    g.output("d", d[0]);
    Executable exe = Device::open("ref").compile(g);
    exe.set_input("x", std::vector<float>{1, 2, 3, 4});
    exe.run();
    const std::vector<float> got = exe.output("d");
    for (std::size_t i = 0; i < seed.size(); ++i) CHECK(got[i] == f16_to_f32(f32_to_f16(seed[i])));  // through f16
  }

  TEST_CASE("global average pooling, NCHW and NHWC") {
    check_gradients({{"x", {2, 3, 3, 2}}}, [](Graph& g, const auto& t) { return g.global_avg_pool(t[0]); });
    check_gradients({{"x", {2, 3, 1, 2}}},
                    [](Graph& g, const auto& t) { return g.global_avg_pool(t[0], {Layout::NHWC}); });
  }

  TEST_CASE("reduce: sum and mean over any axes, dims kept or not; max and min have no rule yet") {
    check_gradients({{"x", {2, 3, 1, 4}}}, [](Graph& g, const auto& t) {
      return g.reduce(t[0], {.op = Reduction::Sum, .axes = {1, 3}, .keepdims = false});
    });
    check_gradients({{"x", {3, 5}}}, [](Graph& g, const auto& t) {
      return g.reduce(t[0], {.op = Reduction::Mean, .axes = {0}, .keepdims = true});
    });
    Graph g;
    const Tensor x = g.input("x", {2, 3});
    const Tensor loss = g.reduce(x, {.op = Reduction::Max, .axes = {1}, .keepdims = true});
    const Tensor wrt[] = {x};
    CHECK(contains(error_of([&] { autodiff::gradients(g, loss, wrt); }, ErrorCode::Unsupported), "of max"));
  }

  TEST_CASE("batchnorm: every input, and training mode through the batch statistics") {
    check_gradients({{"x", {2, 3, 2, 2}}, {"scale", {3}}, {"bias", {3}}, {"mean", {3}}, {"var", {3}, 0.5f, 2.0f}},
                    [](Graph& g, const auto& t) { return g.batchnorm(t[0], t[1], t[2], t[3], t[4], {0.1f}); });
    check_gradients({{"x", {4, 3, 2, 1}}, {"scale", {3}}, {"bias", {3}}}, [](Graph& g, const auto& t) {
      return autodiff::batchnorm_training(g, t[0], t[1], t[2], 1e-3f).y;
    });
  }

  TEST_CASE("dropout: the gradient applies the forward's mask and scale, recomputed") {
    check_gradients({{"x", {3, 7, 5}}}, [](Graph& g, const auto& t) {
      const float step[] = {5.0f};
      return g.dropout(t[0], g.constant("step", {1}, step), {.ratio = 0.4f, .seed = 11});
    });
    check_gradients({{"x", {9, 2, 5}}}, [](Graph& g, const auto& t) {  // stochastic depth: whole samples
      const float step[] = {2.0f};
      return g.dropout(t[0], g.constant("step", {1}, step), {.ratio = 0.4f, .seed = 11, .mask_dims = 1});
    });
  }

  TEST_CASE("mean squared error") {
    check_gradients({{"p", {3, 2}}, {"t", {3, 2}}},
                    [](Graph& g, const auto& t) { return autodiff::mean_squared_error(g, t[0], t[1]); });
  }

  TEST_CASE("a tensor the loss does not depend on gets zeros; bad arguments are errors") {
    Graph g;
    const Tensor x = g.input("x", {2}), unused = g.input("unused", {3});
    const Tensor y = g.tanh(x);
    const Tensor wrt[] = {unused};
    const std::vector<Tensor> d = autodiff::gradients(g, y, wrt);
    g.output("d", d[0]);
    Executable exe = Device::open("ref").compile(g);
    exe.set_input("x", std::vector<float>{1, 2});
    exe.set_input("unused", std::vector<float>{1, 2, 3});
    exe.run();
    CHECK(exe.output("d") == std::vector<float>{0, 0, 0});
    CHECK_THROWS_WITH_AS(autodiff::gradients(g, y, wrt, unused), doctest::Contains("seed"), Error);
    const Tensor foreign[] = {Tensor{999}};
    CHECK_THROWS_AS(autodiff::gradients(g, y, foreign), Error);
  }

  TEST_CASE("no gradient flows to or through integer and bool tensors; asking for one is an error") {
    Graph g;
    const Tensor x = g.input("x", {4});
    const Tensor mask = g.cast(g.greater(x, g.constant("zero", {1}, std::vector<float>{0.0f})), DType::f32);
    const Tensor truncated = g.cast(g.cast(x, DType::i32), DType::f32);  // piecewise constant: no gradient
    const Tensor table = g.constant("table", {5}, std::vector<float>{10, 20, 30, 40, 50});
    const Tensor looked_up = g.gather(table, g.cast(x, DType::i64));  // nor through its indices
    const Tensor y = g.add(g.add(g.mul(x, mask), truncated), looked_up);
    const Tensor wrt[] = {x};
    g.output("d", autodiff::gradients(g, y, wrt)[0]);
    Executable exe = Device::open("ref").compile(g);
    exe.set_input("x", std::vector<float>{-1.5f, 0.5f, 2.7f, -0.2f});
    exe.run();
    CHECK(exe.output("d") == std::vector<float>{0, 1, 1, 0});  // relu's derivative, from x * (x > 0) alone
    const Tensor ids = g.input("ids", {4}, DType::i64);
    const Tensor by_ids = g.gather(table, ids);
    const Tensor wrt_ids[] = {ids};
    check_error([&] { autodiff::gradients(g, by_ids, wrt_ids); }, ErrorCode::InvalidArgument,
                {"'ids'", "i64", "only f32, f16 and bf16"});
    check_error([&] { autodiff::gradients(g, ids, wrt); }, ErrorCode::InvalidArgument, {"loss 'ids'", "i64"});
  }

  TEST_CASE("an op without a backward rule is Unsupported, naming the op and node") {
    Graph g;
    const Tensor x = g.input("x", {2, 4}), scale = g.input("scale", {4});
    const Tensor y = g.rms_norm(x, scale, {}, "norm");
    const Tensor wrt[] = {x};
    CHECK(contains(error_of([&] { autodiff::gradients(g, y, wrt); }, ErrorCode::Unsupported), "rms_norm 'norm'"));
    const Tensor p = g.pow(x, g.input("e", {1}), "power");
    const Tensor wrt_e[] = {g.inputs().back()};
    CHECK(contains(error_of([&] { autodiff::gradients(g, p, wrt_e); }, ErrorCode::Unsupported), "'power'"));
  }

  TEST_CASE("relu, clip, relu6, gelu (both forms), hard_sigmoid and hard_swish") {
    const std::vector<Param> x = {{"x", {3, 7}, -4.0f, 4.0f}};
    check_gradients(x, [](Graph& g, const auto& t) { return g.relu(t[0]); });
    check_gradients(x, [](Graph& g, const auto& t) { return g.clip(t[0], -1.5f, 2.0f); });
    check_gradients(x, [](Graph& g, const auto& t) { return g.relu6(g.mul(t[0], t[0])); });
    check_gradients(x, [](Graph& g, const auto& t) { return g.gelu(t[0]); });
    check_gradients(x, [](Graph& g, const auto& t) { return g.gelu(t[0], {.tanh_approximation = true}); });
    check_gradients(x, [](Graph& g, const auto& t) { return g.hard_sigmoid(t[0], {0.3f, 0.4f}); });
    check_gradients(x, [](Graph& g, const auto& t) { return g.hard_swish(t[0]); });
  }

  TEST_CASE("conv2d: data, filters, bias and residual; stride, asymmetric padding, dilation, groups, depthwise") {
    struct Case {
      const char* name;
      Shape x, w;
      Conv2dParams p;
    };
    const Case cases[] = {
        {"plain", {2, 3, 5, 6}, {4, 3, 3, 3}, {}},
        {"stride 2, asymmetric pads", {1, 2, 7, 6}, {3, 2, 3, 2}, {.stride = {2, 2}, .pad = {1, 0, 2, 1}}},
        {"stride 3 leaving rows over", {1, 2, 8, 7}, {2, 2, 2, 3}, {.stride = {3, 2}, .pad = {0, 1, 0, 0}}},
        {"dilation 2", {1, 2, 7, 7}, {2, 2, 3, 3}, {.pad = {2, 1, 1, 2}, .dilation = {2, 2}}},
        {"groups 2", {2, 4, 5, 5}, {6, 2, 3, 3}, {.stride = {2, 1}, .pad = {1, 1, 1, 1}, .groups = 2}},
        {"depthwise, stride 2", {1, 3, 6, 5}, {3, 1, 3, 3}, {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .groups = 3}},
        {"depthwise, stride 2 leaving rows over", {2, 4, 8, 7}, {4, 1, 3, 3},
         {.stride = {2, 2}, .pad = {0, 1, 0, 0}, .groups = 4}},
        {"depthwise nhwc, dilation 2", {2, 7, 6, 3}, {3, 1, 3, 3},
         {.pad = {2, 1, 1, 2}, .dilation = {2, 2}, .groups = 3, .layout = Layout::NHWC}},
        {"depthwise, 2 filters per channel", {1, 3, 5, 5}, {6, 1, 3, 3}, {.pad = {1, 1, 1, 1}, .groups = 3}},
        {"1x1", {2, 3, 2, 3}, {5, 3, 1, 1}, {}},
        {"nhwc, groups 2", {1, 5, 4, 4}, {4, 2, 3, 3}, {.pad = {1, 1, 0, 0}, .groups = 2, .layout = Layout::NHWC}},
        // The strided data gradient's phases: taps a dilation apart, phases without taps, pads past
        // the filter, a stride past it, x smaller than the stride.
        {"stride 2, dilation 2", {1, 2, 9, 8}, {2, 2, 3, 3},
         {.stride = {2, 2}, .pad = {2, 1, 1, 2}, .dilation = {2, 2}}},
        {"stride 3 x 2, dilation 1 x 3, a 1x3 filter", {1, 2, 7, 10}, {3, 2, 1, 3},
         {.stride = {3, 2}, .pad = {0, 1, 0, 1}, .dilation = {1, 3}}},
        {"stride 2, pads past the filter", {1, 2, 5, 5}, {2, 2, 2, 2}, {.stride = {2, 2}, .pad = {3, 0, 0, 3}}},
        {"stride 4, 3 taps", {1, 2, 9, 10}, {2, 2, 3, 3}, {.stride = {4, 4}, .pad = {1, 2, 0, 0}}},
        {"groups 2, stride 2, odd sizes", {2, 4, 7, 5}, {4, 2, 3, 3},
         {.stride = {2, 2}, .pad = {0, 1, 1, 0}, .groups = 2}},
        {"depthwise nhwc, stride 2, one row", {2, 1, 3, 3}, {3, 1, 3, 3},
         {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .groups = 3, .layout = Layout::NHWC}},
        {"depthwise 5x5, stride 2", {1, 2, 9, 6}, {2, 1, 5, 5}, {.stride = {2, 2}, .pad = {2, 2, 2, 1}, .groups = 2}},
        {"nhwc, stride 2", {2, 5, 6, 3}, {4, 3, 3, 3}, {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .layout = Layout::NHWC}},
        // The same phases, spread and crops in NHWC (x is [N, H, W, C] there).
        {"nhwc 1x1, stride 2 x 3, asymmetric pads", {2, 7, 8, 3}, {4, 3, 1, 1},
         {.stride = {2, 3}, .pad = {0, 1, 1, 0}, .layout = Layout::NHWC}},
        {"nhwc, stride 3 x 2, dilation 1 x 3, a 1x3 filter", {1, 7, 10, 2}, {3, 2, 1, 3},
         {.stride = {3, 2}, .pad = {0, 1, 0, 1}, .dilation = {1, 3}, .layout = Layout::NHWC}},
        {"nhwc, stride 4, phases without taps", {1, 9, 10, 2}, {2, 2, 3, 3},
         {.stride = {4, 4}, .pad = {1, 2, 0, 0}, .layout = Layout::NHWC}},
        {"nhwc, stride 2, pads past the filter", {1, 5, 5, 2}, {2, 2, 2, 2},
         {.stride = {2, 2}, .pad = {3, 0, 0, 3}, .layout = Layout::NHWC}},
        {"nhwc groups 2, stride 2 x 1, odd sizes", {2, 7, 5, 4}, {4, 2, 3, 3},
         {.stride = {2, 1}, .pad = {0, 1, 1, 0}, .groups = 2, .layout = Layout::NHWC}},
    };
    for (const Case& c : cases) {
      CAPTURE(c.name);
      check_gradients({{"x", c.x}, {"w", c.w}, {"b", {c.w[0]}}},
                      [p = c.p](Graph& g, const auto& t) { return g.conv2d(t[0], t[1], p, t[2]); });
    }
  }

  TEST_CASE("conv2d with a fused activation and a residual") {
    for (const Activation a : {Activation::Relu, Activation::Relu6, Activation::Silu, Activation::Gelu}) {
      CAPTURE(to_string(a));
      check_gradients({{"x", {1, 2, 5, 5}}, {"w", {3, 2, 3, 3}}, {"b", {3}}, {"r", {1, 3, 3, 3}}},
                      [a](Graph& g, const auto& t) {
                        return g.conv2d(t[0], t[1], {.stride = {2, 2}, .pad = {1, 1, 1, 1}, .activation = a}, t[2], {},
                                        t[3]);
                      });
    }
  }

  TEST_CASE("max and average pooling: padding, stride, dilation, ceil_mode, count_include_pad, NHWC") {
    const Pool2dParams cases[] = {
        {.kernel = {2, 2}, .stride = {2, 2}},
        {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 0, 1, 1}},
        {.kernel = {3, 2}, .stride = {2, 1}, .pad = {1, 1, 1, 0}, .count_include_pad = true},
        {.kernel = {2, 2}, .stride = {2, 2}, .ceil_mode = true},
        {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1, 1, 1}, .ceil_mode = true, .count_include_pad = true},
        {.kernel = {2, 2}, .dilation = {2, 2}},
        {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1, 1, 1}, .layout = Layout::NHWC},
    };
    for (const Pool2dParams& p : cases) {
      CAPTURE(p.kernel[0]);
      CAPTURE(p.stride[0]);
      CAPTURE(p.ceil_mode);
      check_gradients({{"x", {2, 2, 5, 5}}}, [p](Graph& g, const auto& t) { return g.avg_pool2d(t[0], p); });
      // Small x over distinct steps of 0.1: no step of the differences changes a window's maximum.
      check_gradients({{"x", {2, 2, 5, 5}, -0.02f, 0.02f}}, [p](Graph& g, const auto& t) {
        return g.max_pool2d(g.add(t[0], g.constant("steps", {2, 2, 5, 5}, shuffled_steps(100, 0.1f))), p);
      });
    }
  }

  TEST_CASE("max pooling's gradient goes to the first maximum among ties, as PyTorch's") {
    Graph g;
    const Tensor x = g.input("x", {1, 1, 2, 3});
    const Pool2dParams p{.kernel = {2, 2}, .stride = {1, 1}};
    const Tensor y = g.max_pool2d(x, p);
    const Tensor wrt[] = {x};
    g.output("dx", autodiff::gradients(g, y, wrt)[0]);
    Executable exe = Device::open("ref").compile(g);
    exe.set_input("x", std::vector<float>{1, 5, 5, 5, 5, 2});
    exe.run();
    CHECK(exe.output("dx") == std::vector<float>{0, 2, 0, 0, 0, 0});
  }

  TEST_CASE("softmax cross-entropy: one-hot and soft labels, and the value against its formula") {
    const std::vector<float> onehot = {0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0};
    const std::vector<float> soft = {0.1f, 0.6f, 0.2f, 0.1f, 0.3f, 0.3f, 0.2f, 0.2f, 0.0f, 0.5f, 0.25f, 0.25f};
    for (const auto* labels : {&onehot, &soft})
      check_gradients({{"z", {3, 4}, -3.0f, 3.0f}}, [labels](Graph& g, const auto& t) {
        return autodiff::softmax_cross_entropy(g, t[0], g.constant("labels", {3, 4}, *labels));
      });
    Graph g;
    const Tensor z = g.input("z", {2, 3});
    g.output("loss", autodiff::softmax_cross_entropy(g, z, g.constant("l", {2, 3}, std::vector<float>{0, 0, 1, 1, 0, 0})));
    Executable exe = Device::open("ref").compile(g);
    exe.set_input("z", std::vector<float>{1, 2, 3, 1000, 0, -1000});  // stable where exp would overflow
    exe.run();
    const double row0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0;
    CHECK(exe.output("loss")[0] == doctest::Approx((row0 + 0.0) / 2.0).epsilon(1e-6));
  }

  TEST_CASE("softmax cross-entropy with integer class labels: i64 and i32, any rank, as its one-hot") {
    for (const DType t : {DType::i64, DType::i32}) {
      CAPTURE(to_string(t));
      check_gradients({{"z", {3, 4}, -3.0f, 3.0f}}, [t](Graph& g, const auto& z) {
        return autodiff::softmax_cross_entropy(g, z[0], g.constant("labels", {3}, std::vector<float>{1, 3, 0}, t));
      });
      check_gradients({{"z", {2, 2, 5}, -3.0f, 3.0f}}, [t](Graph& g, const auto& z) {
        const Tensor labels = g.constant("labels", {2, 2}, std::vector<float>{4, 0, 2, 2}, t);
        return autodiff::softmax_cross_entropy(g, z[0], labels);
      });
      // A batch of one, an odd class count past a GPU thread's share of a row, the last class, a vector.
      check_gradients({{"z", {1, 37}, -3.0f, 3.0f}}, [t](Graph& g, const auto& z) {
        return autodiff::softmax_cross_entropy(g, z[0], g.constant("labels", {1}, std::vector<float>{36}, t));
      });
      check_gradients({{"z", {5}, -3.0f, 3.0f}}, [t](Graph& g, const auto& z) {
        return autodiff::softmax_cross_entropy(g, z[0], g.constant("labels", {1}, std::vector<float>{3}, t));
      });
    }
    Graph g;
    const Tensor z = g.input("z", {2, 3}), labels = g.input("labels", {2}, DType::i64);
    const Tensor loss = autodiff::softmax_cross_entropy(g, z, labels);
    g.output("loss", loss);
    g.output("dz", autodiff::gradients(g, loss, std::vector<Tensor>{z})[0]);
    // The op reads the labels itself: no gather, no one-hot rows, no classes x classes constant.
    for (const Node& n : g.nodes()) CHECK(n.op != OpKind::Gather);
    for (const TensorInfo& info : g.tensors()) CHECK(info.desc.numel() < 9);
    const Tensor onehot = g.constant("onehot", {2, 3}, std::vector<float>{0, 0, 1, 1, 0, 0});
    const Tensor onehot_loss = autodiff::softmax_cross_entropy(g, z, onehot);
    g.output("onehot", onehot_loss);
    g.output("onehot_dz", autodiff::gradients(g, onehot_loss, std::vector<Tensor>{z})[0]);
    Executable exe = Device::open("ref").compile(g);
    exe.set_input("z", std::vector<float>{1, 2, 3, 1000, 0, -1000});
    exe.set_input("labels", std::vector<float>{2, 0});
    exe.run();
    CHECK(exe.output("loss") == exe.output("onehot"));
    const std::vector<float> dz = exe.output("dz"), onehot_dz = exe.output("onehot_dz");
    for (std::size_t i = 0; i < dz.size(); ++i) CHECK(dz[i] == doctest::Approx(onehot_dz[i]).epsilon(1e-6));
    exe.set_input("labels", std::vector<float>{2, 3});  // class 3 of 3
    check_error([&] { exe.run(); }, ErrorCode::InvalidArgument, {"label 3", "[0, 3)", "3 classes"});
    check_error([&] { autodiff::softmax_cross_entropy(g, z, g.input("l3", {3}, DType::i64)); }, ErrorCode::ShapeMismatch,
                {"[2]"});
  }

  // Labels outside [0, classes) are errors, a negative one too: PyTorch's -100 "ignore" label counted from
  // the end would silently train class 900 of 1000.
  TEST_CASE("integer class labels out of range, -1 included, are an error of the run on every device") {
    for (const std::string& spec : devices_under_test()) {
      CAPTURE(spec);
      const std::optional<Device> device = open_or_skip(spec);
      if (!device) continue;
      for (const DType t : {DType::i64, DType::i32})
        for (const bool with_loss : {true, false}) {  // the loss, or the gradient alone
          CAPTURE(to_string(t));
          CAPTURE(with_loss);
          Graph g;
          const Tensor z = g.input("z", {3, 5}), labels = g.input("labels", {3}, t);
          if (with_loss) g.output("loss", g.softmax_cross_entropy(z, labels, "xent"));
          g.output("dz", g.softmax_cross_entropy_backward(z, labels, g.input("dy", {3}), "xent_grad"));
          const std::string node = with_loss ? "'xent" : "softmax_cross_entropy_backward 'xent_grad'";
          Executable exe = device->compile(g);
          exe.set_input("z", std::vector<float>(15, 0.0f));
          exe.set_input("dy", std::vector<float>{1.0f, 2.0f, 1.0f});
          for (const float bad : {5.0f, -1.0f}) {
            exe.set_input("labels", std::vector<float>{0, bad, 1});
            const std::string label = "label " + std::to_string(static_cast<int>(bad));
            check_error([&] { exe.run(); }, ErrorCode::InvalidArgument, {node, label, "[0, 5)", "5 classes"});
          }
          exe.set_input("labels", std::vector<float>{4, 0, 1});
          exe.run();
          if (with_loss)
            for (const float loss : exe.output("loss")) CHECK(loss == doctest::Approx(std::log(5.0)));
          const std::vector<float> want = {0.2f, 0.2f, 0.2f, 0.2f, -0.8f, -1.6f, 0.4f, 0.4f,
                                           0.4f, 0.4f, 0.2f, -0.8f, 0.2f, 0.2f, 0.2f};
          const std::vector<float> dz = exe.output("dz");
          REQUIRE(dz.size() == want.size());
          for (std::size_t i = 0; i < want.size(); ++i) CHECK(dz[i] == doctest::Approx(want[i]).epsilon(1e-6));
        }
    }
  }

  TEST_CASE("softmax_cross_entropy_backward refuses float labels and shapes other than the loss's") {
    Graph g;
    const Tensor z = g.input("z", {2, 3}), l = g.input("l", {2}, DType::i64), dy = g.input("dy", {2});
    check_error([&] { g.softmax_cross_entropy_backward(z, g.input("soft", {2, 3}), dy); }, ErrorCode::DTypeMismatch,
                {"i64 or i32"});
    check_error([&] { g.softmax_cross_entropy_backward(z, l, g.input("dy3", {3})); }, ErrorCode::ShapeMismatch,
                {"[3]", "[2]"});
    check_error([&] { g.softmax_cross_entropy_backward(z, g.input("l23", {2, 3}, DType::i32), dy); },
                ErrorCode::ShapeMismatch, {"[2, 3]"});
    check_error([&] { g.softmax_cross_entropy(z, g.input("b", {2}, DType::boolean)); }, ErrorCode::ShapeMismatch,
                {"i64 or i32"});
    CHECK(g.shape(g.softmax_cross_entropy_backward(z, l, dy)) == Shape{2, 3});
    CHECK(g.shape(g.softmax_cross_entropy(g.input("v", {4}), g.input("vl", {1}, DType::i32))) == Shape{1});
  }

  TEST_CASE("attention: q, k, v and the mask; causal, with more keys than queries, and broadcast masks") {
    const Build plain = [](Graph& g, const auto& t) { return g.attention(t[0], t[1], t[2]); };
    check_gradients({{"q", {1, 2, 3, 4}}, {"k", {1, 2, 5, 4}}, {"v", {1, 2, 5, 3}}}, plain);
    check_gradients({{"q", {2, 1, 4, 3}}, {"k", {2, 1, 4, 3}}, {"v", {2, 1, 4, 2}}}, [](Graph& g, const auto& t) {
      return g.attention(t[0], t[1], t[2], {.scale = 0.7f, .causal = true});
    });
    // A padding mask per batch and key, as BERT's, and a full one per head.
    check_gradients({{"q", {2, 2, 3, 4}}, {"k", {2, 2, 5, 4}}, {"v", {2, 2, 5, 2}}, {"mask", {2, 1, 1, 5}}},
                    [](Graph& g, const auto& t) { return g.attention(t[0], t[1], t[2], {}, t[3]); });
    check_gradients({{"q", {1, 2, 3, 4}}, {"k", {1, 2, 6, 4}}, {"v", {1, 2, 6, 3}}, {"mask", {1, 2, 3, 6}}},
                    [](Graph& g, const auto& t) { return g.attention(t[0], t[1], t[2], {.causal = true}, t[3]); });
  }

  TEST_CASE("gather along axis 0: repeated and negative indices sum into their rows; other axes are Unsupported") {
    for (const DType type : {DType::i64, DType::i32}) {
      const std::vector<std::int64_t> rows{2, 0, -1, 2, 4, -5};  // -1 is row 4, -5 row 0; row 1 and 3 unread
      std::vector<std::byte> bytes(rows.size() * size_of(type));
      for (std::size_t i = 0; i < rows.size(); ++i) {
        if (type == DType::i64) std::memcpy(bytes.data() + i * 8, &rows[i], 8);
        else { const auto v = static_cast<std::int32_t>(rows[i]); std::memcpy(bytes.data() + i * 4, &v, 4); }
      }
      check_gradients({{"table", {5, 3}}}, [&](Graph& g, const auto& t) {
        return g.gather(t[0], g.constant_bytes("rows", {2, 3}, type, bytes), 0);
      });
    }
    Graph g;
    const Tensor table = g.input("table", {4, 3});
    const std::vector<std::int64_t> one{1};
    const Tensor y = g.gather(table, g.constant_bytes("i", {1}, DType::i64, std::as_bytes(std::span(one))), 1, "columns");
    const Tensor wrt[] = {table};
    CHECK(contains(error_of([&] { autodiff::gradients(g, y, wrt); }, ErrorCode::Unsupported), "'columns'"));
  }

  TEST_CASE("layer_norm, erf, sqrt, reciprocal and pow") {
    check_gradients({{"x", {3, 2, 4}}, {"scale", {2, 4}}, {"bias", {4}}}, [](Graph& g, const auto& t) {
      return g.layer_norm(t[0], t[1], g.expand(t[2], {2, 4}), {.axis = 1, .epsilon = 1e-3f});
    });
    check_gradients({{"x", {2, 5}}}, [](Graph& g, const auto& t) { return g.erf(t[0]); });
    check_gradients({{"x", {2, 5}, 0.5f, 2.0f}}, [](Graph& g, const auto& t) { return g.sqrt(t[0]); });
    check_gradients({{"x", {2, 5}, 0.5f, 2.0f}}, [](Graph& g, const auto& t) { return g.reciprocal(t[0]); });
    check_gradients({{"x", {2, 5}, 0.5f, 2.0f}}, [](Graph& g, const auto& t) {
      return g.pow(t[0], g.constant("e", {5}, std::vector<float>{2.0f, -1.0f, 0.5f, 1.7f, 3.0f}));
    });
  }

  TEST_CASE("the backward ops and conv2d's gradients refuse bad operands, saying which") {
    Graph g;
    const Tensor x = g.input("x", {1, 2, 4, 4}), w = g.input("w", {3, 2, 3, 3}), v = g.input("v", {2, 3});
    check_error([&] { g.activation_backward(x, x, {.activation = OpKind::Tanh}); }, ErrorCode::InvalidArgument,
                {"tanh"});
    check_error([&] { g.activation_backward(x, v, {}); }, ErrorCode::ShapeMismatch, {"[2, 3]"});
    check_error([&] { g.max_pool2d_backward(x, x, {.kernel = {2, 2}, .stride = {2, 2}}); }, ErrorCode::ShapeMismatch,
                {"[1, 2, 2, 2]"});
    check_error([&] { g.softmax_cross_entropy(v, x); }, ErrorCode::ShapeMismatch, {"labels"});
    check_error([&] { autodiff::conv2d_backward_data(g, v, w, {}, {1, 2, 4, 4}); }, ErrorCode::ShapeMismatch,
                {"[1, 3, 2, 2]"});
    check_error([&] { autodiff::conv2d_backward_filter(g, x, x, {.groups = 2}, {3, 2, 3, 3}); },
                ErrorCode::ShapeMismatch, {"groups 2"});
    check_error([&] { g.depthwise_filter_gradient(x, v, {.groups = 2}); }, ErrorCode::ShapeMismatch, {"[2, 3]"});
    check_error([&] { g.depthwise_filter_gradient(x, x, {.groups = 1}); }, ErrorCode::InvalidArgument,
                {"groups 1"});
    check_error([&] { g.depthwise_filter_gradient(x, g.input("big", {1, 2, 6, 6}), {.groups = 2}); },
                ErrorCode::ShapeMismatch, {"larger"});
  }

  TEST_CASE("slice (forwards and backwards), constant pad (growing and cropping) and expand") {
    check_gradients({{"x", {3, 6}}}, [](Graph& g, const auto& t) {
      return g.slice(t[0], {.starts = {1, 4}, .ends = {3, -7}, .axes = {0, 1}, .steps = {1, -1}});
    });
    check_gradients({{"x", {2, 3, 4}}}, [](Graph& g, const auto& t) {
      return g.pad(t[0], {.pads = {0, 1, -1, 1, 0, 2}, .value = 0.5f});
    });
    check_gradients({{"x", {3, 1}}}, [](Graph& g, const auto& t) { return g.expand(t[0], {2, 3, 4}); });
  }
}

}  // namespace porta::test
