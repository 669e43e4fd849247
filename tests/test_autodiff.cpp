// autodiff::gradients: every backward rule against central finite differences on ref (the loss
// summed in double on the host), and the same gradients on every device under test against ref.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
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

  TEST_CASE("an op without a backward rule is Unsupported, naming the op and node") {
    Graph g;
    const Tensor x = g.input("x", {1, 2, 4, 4}), w = g.input("w", {3, 2, 3, 3});
    const Tensor y = g.relu(g.conv2d(x, w, {}, {}, "conv"), "act");
    const Tensor wrt[] = {w};
    CHECK(contains(error_of([&] { autodiff::gradients(g, y, wrt); }, ErrorCode::Unsupported), "'act'"));
    const Tensor z = g.sigmoid(g.conv2d(x, w, {}, {}, "conv_b"));
    CHECK(contains(error_of([&] { autodiff::gradients(g, z, wrt); }, ErrorCode::Unsupported), "conv2d 'conv_b'"));
  }
}

}  // namespace porta::test
