// End to end: a small MLP with a training-mode batchnorm learns a fixed synthetic classification
// task under SGD with momentum and weight decay (the update inside the graph), on ref and on every
// device under test, and the loss curves agree. And the SGD update against its formula.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "test_util.hpp"

namespace porta::test {
namespace {

constexpr std::int64_t batch = 24, features = 4, hidden = 12, classes = 3;
constexpr autodiff::SgdOptions sgd{.learning_rate = 1.0f, .momentum = 0.5f, .weight_decay = 1e-4f};

struct Net {
  Graph graph;
  bool variables = false;  // parameters as variables that apply_sgd updates, else inputs
  std::vector<std::string> names;
  std::vector<std::vector<float>> values;  // the parameters' initial values

  Tensor param(const std::string& name, Shape shape, std::vector<float> init) {
    names.push_back(name);
    values.push_back(std::move(init));
    return variables ? graph.variable(name, std::move(shape), values.back()) : graph.input(name, std::move(shape));
  }
};

std::vector<float> uniform(std::size_t n, float scale, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// x: random points; label: the argmax of a fixed random linear map of x, as one-hot rows.
void dataset(std::vector<float>& x, std::vector<float>& onehot) {
  std::mt19937 rng(7);
  x = uniform(batch * features, 1.0f, rng);
  const std::vector<float> map = uniform(features * classes, 1.0f, rng);
  onehot.assign(batch * classes, 0.0f);
  for (std::int64_t n = 0; n < batch; ++n) {
    std::int64_t best = 0;
    float best_score = -1e30f;
    for (std::int64_t c = 0; c < classes; ++c) {
      float s = 0.0f;
      for (std::int64_t f = 0; f < features; ++f) s += x[n * features + f] * map[f * classes + c];
      if (s > best_score) best_score = s, best = c;
    }
    onehot[n * classes + best] = 1.0f;
  }
}

// gemm -> batchnorm (batch statistics) -> tanh -> gemm -> softmax -> mean squared error to one-hot;
// each parameter P has an input "P.velocity" and outputs "P.next" and "P.velocity.next", or, with
// `variables`, is a variable that apply_sgd updates.
Net build_mlp(bool variables = false) {
  Net net;
  net.variables = variables;
  std::mt19937 rng(3);
  Graph& g = net.graph;
  const Tensor x = g.input("x", {batch, features}), target = g.input("target", {batch, classes});
  const Tensor w1 = net.param("w1", {features, hidden}, uniform(features * hidden, 0.5f, rng));
  const Tensor b1 = net.param("b1", {hidden}, std::vector<float>(hidden, 0.0f));
  const Tensor scale = net.param("scale", {hidden}, std::vector<float>(hidden, 1.0f));
  const Tensor shift = net.param("shift", {hidden}, std::vector<float>(hidden, 0.0f));
  const Tensor w2 = net.param("w2", {hidden, classes}, uniform(hidden * classes, 0.5f, rng));
  const Tensor b2 = net.param("b2", {classes}, std::vector<float>(classes, 0.0f));
  const Tensor h = g.tanh(autodiff::batchnorm_training(g, g.gemm(x, w1, {}, b1), scale, shift).y);
  const Tensor p = g.softmax(g.gemm(h, w2, {}, b2));
  const Tensor loss = autodiff::mean_squared_error(g, p, target);
  g.output("loss", loss);
  const Tensor params[] = {w1, b1, scale, shift, w2, b2};
  const std::vector<Tensor> grads = autodiff::gradients(g, loss, params);
  if (variables) {
    autodiff::apply_sgd(g, params, grads, sgd);
    return net;
  }
  for (std::size_t i = 0; i < grads.size(); ++i) {
    const Tensor velocity = g.input(net.names[i] + ".velocity", g.shape(params[i]));
    const autodiff::SgdUpdate next = autodiff::sgd_update(g, params[i], grads[i], velocity, sgd);
    g.output(net.names[i] + ".next", next.param);
    g.output(net.names[i] + ".velocity.next", next.velocity);
  }
  return net;
}

// The loss before each of `steps` SGD steps.
std::vector<float> train(const Net& net, const Device& device, int steps) {
  std::vector<float> x, target;
  dataset(x, target);
  Executable exe = device.compile(net.graph);
  exe.set_input("x", x);
  exe.set_input("target", target);
  std::vector<float> curve;
  if (net.variables) {  // the parameters stay on the device
    for (int step = 0; step < steps; ++step) {
      exe.run();
      curve.push_back(exe.output("loss")[0]);
    }
    return curve;
  }
  std::vector<std::vector<float>> params = net.values, velocities;
  for (const auto& p : params) velocities.emplace_back(p.size(), 0.0f);
  for (int step = 0; step < steps; ++step) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      exe.set_input(net.names[i], params[i]);
      exe.set_input(net.names[i] + ".velocity", velocities[i]);
    }
    exe.run();
    curve.push_back(exe.output("loss")[0]);
    for (std::size_t i = 0; i < params.size(); ++i) {
      params[i] = exe.output(net.names[i] + ".next");
      velocities[i] = exe.output(net.names[i] + ".velocity.next");
    }
  }
  return curve;
}

}  // namespace

TEST_SUITE("autodiff") {
  TEST_CASE("sgd_update: weight decay, momentum, and the plain step without a velocity") {
    Graph g;
    const Tensor p = g.input("p", {3}), d = g.input("d", {3}), v = g.input("v", {3});
    const auto with = autodiff::sgd_update(g, p, d, v, {.learning_rate = 0.5f, .momentum = 0.9f, .weight_decay = 0.1f});
    const auto plain = autodiff::sgd_update(g, p, d, {}, {.learning_rate = 0.5f});
    CHECK_FALSE(plain.velocity);
    g.output("p1", with.param);
    g.output("v1", with.velocity);
    g.output("p2", plain.param);
    Executable exe = Device::open("ref").compile(g);
    exe.set_input("p", std::vector<float>{1, -2, 4});
    exe.set_input("d", std::vector<float>{0.5f, 1, -1});
    exe.set_input("v", std::vector<float>{1, 0, 2});
    exe.run();
    // v1 = 0.9 v + d + 0.1 p; p1 = p - 0.5 v1; p2 = p - 0.5 d
    const std::vector<float> v1 = {0.9f + 0.5f + 0.1f, 1 - 0.2f, 1.8f - 1 + 0.4f};
    const std::vector<float> got_v = exe.output("v1"), got_p = exe.output("p1"), got_plain = exe.output("p2");
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(got_v[i] == doctest::Approx(v1[i]).epsilon(1e-6));
      CHECK(got_p[i] == doctest::Approx(std::vector<float>{1, -2, 4}[i] - 0.5f * v1[i]).epsilon(1e-6));
    }
    CHECK(got_plain == std::vector<float>{0.75f, -2.5f, 4.5f});
    CHECK_THROWS_AS(autodiff::sgd_update(g, p, d, {}, {.momentum = 0.9f}), Error);
  }

  TEST_CASE("an MLP with batchnorm learns under SGD with momentum, with the same loss curve on ref and every device") {
    const Net net = build_mlp(), on_device = build_mlp(true);
    const std::vector<float> ref = train(net, Device::open("ref"), 40);
    MESSAGE("ref loss: " << ref.front() << " -> " << ref.back());
    CHECK(ref.back() < 0.3f * ref.front());
    // Variables updated in place by apply_sgd: the same arithmetic as the round trip through the host.
    CHECK(train(on_device, Device::open("ref"), 40) == ref);
    for (const std::string& spec : devices_under_test()) {
      const std::optional<Device> device = open_or_skip(spec);
      if (!device) continue;
      for (const Net* n : {&net, &on_device}) {
        const std::vector<float> curve = train(*n, *device, 40);
        for (std::size_t i = 0; i < ref.size(); ++i) {
          INFO("step " << i << ": " << spec << (n->variables ? " (variables) " : " ") << curve[i] << ", ref " << ref[i]);
          CHECK(std::abs(curve[i] - ref[i]) <= 1e-3f * ref[i]);
        }
      }
    }
  }
}

}  // namespace porta::test
