// End to end: a small MLP with a training-mode batchnorm and a small CNN (conv, batchnorm, relu, max
// pool, conv, global average pool, gemm, softmax cross-entropy) learn fixed synthetic classification
// tasks under SGD with momentum and weight decay (the update inside the graph), on ref and on every
// device under test, and the loss curves agree. And the SGD update against its formula.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <string>

#include "op_cases/verify.hpp"
#include "test_util.hpp"
#include "training_data.hpp"

namespace porta::test {
namespace {

constexpr std::int64_t batch = 24, features = 4, hidden = 12, classes = 3;
constexpr autodiff::SgdOptions sgd{.learning_rate = 1.0f, .momentum = 0.5f, .weight_decay = 1e-4f};

// Inputs "x" and "target"; each parameter P an input with an input "P.velocity" and outputs "P.next"
// and "P.velocity.next", or, with `variables`, a variable that apply_sgd updates on the device;
// outputs "loss" and "logits".
struct Net {
  Graph graph;
  bool variables = false;
  std::vector<std::string> names;
  std::vector<Tensor> params;
  std::vector<std::vector<float>> values;  // the parameters' initial values

  Tensor param(const std::string& name, Shape shape, std::vector<float> init) {
    names.push_back(name);
    values.push_back(std::move(init));
    params.push_back(variables ? graph.variable(name, std::move(shape), values.back())
                               : graph.input(name, std::move(shape)));
    return params.back();
  }

  // The loss, its gradients and one SGD step per parameter, as outputs or assignments.
  void train_with(Tensor logits, Tensor loss, const autodiff::SgdOptions& options) {
    graph.output("logits", logits);
    graph.output("loss", loss);
    const std::vector<Tensor> grads = autodiff::gradients(graph, loss, params);
    if (variables) {
      autodiff::apply_sgd(graph, params, grads, options);
      return;
    }
    for (std::size_t i = 0; i < grads.size(); ++i) {
      const Tensor velocity = graph.input(names[i] + ".velocity", graph.shape(params[i]));
      const autodiff::SgdUpdate next = autodiff::sgd_update(graph, params[i], grads[i], velocity, options);
      graph.output(names[i] + ".next", next.param);
      graph.output(names[i] + ".velocity.next", next.velocity);
    }
  }
};

// x: random points; label: the argmax of a fixed random linear map of x, as one-hot rows.
Data points() {
  Data d;
  std::vector<float>& x = d.x;
  std::vector<float>& onehot = d.onehot;
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
  return d;
}

// gemm -> batchnorm (batch statistics) -> tanh -> gemm -> softmax -> mean squared error to one-hot;
// the parameters as Net::param makes them.
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
  const Tensor logits = g.gemm(h, w2, {}, b2);
  net.train_with(logits, autodiff::mean_squared_error(g, g.softmax(logits), target), sgd);
  return net;
}

// conv 3x3 (8) -> batchnorm (batch statistics) -> relu -> max pool 2x2 -> conv 3x3 (16, bias, fused
// relu) -> global average pool -> gemm -> softmax cross-entropy.
Net build_cnn() {
  Net net;
  std::mt19937 rng(5);
  Graph& g = net.graph;
  const Tensor x = g.input("x", {images, 1, side, side}), target = g.input("target", {images, kinds});
  const auto he = [&](std::int64_t fan_in, std::size_t n) { return uniform(n, std::sqrt(6.0f / fan_in), rng); };
  const Tensor w1 = net.param("w1", {8, 1, 3, 3}, he(9, 8 * 9));
  const Tensor scale = net.param("scale", {8}, std::vector<float>(8, 1.0f));
  const Tensor shift = net.param("shift", {8}, std::vector<float>(8, 0.0f));
  const Tensor w2 = net.param("w2", {16, 8, 3, 3}, he(72, 16 * 72));
  const Tensor b2 = net.param("b2", {16}, std::vector<float>(16, 0.0f));
  const Tensor w3 = net.param("w3", {16, kinds}, he(16, 16 * kinds));
  const Tensor b3 = net.param("b3", {kinds}, std::vector<float>(kinds, 0.0f));
  const Tensor c1 = g.conv2d(x, w1, {.pad = {1, 1, 1, 1}});
  const Tensor h1 = g.relu(autodiff::batchnorm_training(g, c1, scale, shift).y);
  const Tensor p1 = g.max_pool2d(h1, {.kernel = {2, 2}, .stride = {2, 2}});
  const Tensor h2 = g.conv2d(p1, w2, {.pad = {1, 1, 1, 1}, .activation = Activation::Relu}, b2);
  const Tensor logits = g.gemm(g.flatten(g.global_avg_pool(h2)), w3, {}, b3);
  net.train_with(logits, autodiff::softmax_cross_entropy(g, logits, target),
                 {.learning_rate = 0.1f, .momentum = 0.9f, .weight_decay = 1e-4f});
  return net;
}

// The loss before each of `steps` SGD steps on `data`, and the parameters after them.
struct Run {
  std::vector<float> curve;
  std::vector<std::vector<float>> params;
};

Run train(const Net& net, const Device& device, int steps, const Data& data) {
  Executable exe = device.compile(net.graph);
  exe.set_input("x", data.x);
  exe.set_input("target", data.onehot);
  Run run{{}, net.values};
  if (net.variables) {  // the parameters and velocities stay on the device
    for (int step = 0; step < steps; ++step) {
      exe.run();
      run.curve.push_back(exe.output("loss")[0]);
    }
    for (std::size_t i = 0; i < run.params.size(); ++i) run.params[i] = exe.variable(net.names[i]);
    return run;
  }
  std::vector<std::vector<float>> velocities;
  for (const auto& p : run.params) velocities.emplace_back(p.size(), 0.0f);
  for (int step = 0; step < steps; ++step) {
    for (std::size_t i = 0; i < run.params.size(); ++i) {
      exe.set_input(net.names[i], run.params[i]);
      exe.set_input(net.names[i] + ".velocity", velocities[i]);
    }
    exe.run();
    run.curve.push_back(exe.output("loss")[0]);
    for (std::size_t i = 0; i < run.params.size(); ++i) {
      run.params[i] = exe.output(net.names[i] + ".next");
      velocities[i] = exe.output(net.names[i] + ".velocity.next");
    }
  }
  return run;
}

// The share of `data`'s rows whose largest logit is their label, under the trained parameters.
double accuracy(const Net& net, const Device& device, const Run& run, const Data& data, std::size_t classes) {
  Executable exe = device.compile(net.graph);
  exe.set_input("x", data.x);
  exe.set_input("target", data.onehot);
  for (std::size_t i = 0; i < run.params.size(); ++i) {
    exe.set_input(net.names[i], run.params[i]);
    exe.set_input(net.names[i] + ".velocity", std::vector<float>(run.params[i].size(), 0.0f));
  }
  exe.run();
  const std::vector<float> logits = exe.output("logits");
  const std::size_t rows = logits.size() / classes;
  std::size_t right = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const auto row = logits.begin() + static_cast<std::ptrdiff_t>(r * classes);
    const auto best = static_cast<std::size_t>(std::max_element(row, row + static_cast<std::ptrdiff_t>(classes)) - row);
    right += data.onehot[r * classes + best] == 1.0f;
  }
  return static_cast<double>(right) / static_cast<double>(rows);
}

// Trains `net` on ref and on every device under test: the loss falls below `fall` of its start on
// ref, and each device's curve stays within `tolerance` (relative) of ref's. Returns every run.
std::vector<std::pair<Device, Run>> check_curves(const Net& net, const Data& data, int steps, float fall,
                                                 float tolerance) {
  std::vector<std::pair<Device, Run>> runs;
  const Device ref_device = Device::open("ref");
  runs.emplace_back(ref_device, train(net, ref_device, steps, data));
  const std::vector<float> ref = runs[0].second.curve;  // a copy: runs grows below
  MESSAGE("ref loss: " << ref.front() << " -> " << ref.back());
  CHECK(ref.back() < fall * ref.front());
  for (const std::string& spec : devices_under_test()) {
    const std::optional<Device> device = open_or_skip(spec);
    if (!device) continue;
    runs.emplace_back(*device, train(net, *device, steps, data));
    const std::vector<float>& curve = runs.back().second.curve;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      INFO("step " << i << ": " << spec << " " << curve[i] << ", ref " << ref[i]);
      CHECK(std::abs(curve[i] - ref[i]) <= tolerance * ref[i]);
    }
  }
  return runs;
}

// The loss and every parameter's gradient of `model` (2 images of 32 px, 10 classes, its dropout and
// stochastic depth on) on the cpu, with the training graph made channels-last or not; and the number
// of transposes of feature maps in the graph.
struct Gradients {
  float loss = 0.0f;
  std::vector<std::vector<float>> grads;
  std::int64_t activation_transposes = 0;
};

Gradients model_gradients(const std::string& model, bool channels_last) {
  const Graph inference = models::build(model, {.batch = 2, .resolution = 64, .classes = 10, .training = true});
  autodiff::TrainingGraph t = autodiff::training_graph(inference, {.channels_last = channels_last});
  Graph& g = t.graph;
  const Tensor logits = g.outputs().at(0).second;
  const Tensor labels = g.input("labels", {2}, DType::i64);
  const Tensor loss = autodiff::softmax_cross_entropy(g, logits, labels);
  g.output("loss", loss);
  const std::vector<Tensor> grads = autodiff::gradients(g, loss, t.params);
  for (std::size_t i = 0; i < grads.size(); ++i) g.output("grad" + std::to_string(i), grads[i]);
  Gradients out;
  for (const Node& n : g.nodes()) {
    const Shape& s = g.shape(n.output);  // a feature map has more than one pixel: [2, C, 1, 1] is a vector
    out.activation_transposes += n.op == OpKind::Transpose && s.size() == 4 && s[0] == 2 &&
                                 s[1] * s[2] * s[3] > std::max(s[1], s[3]);
  }
  Executable exe = Device::open("cpu").compile(g);
  std::mt19937 rng(9);
  exe.set_input(g.info(g.inputs().at(0)).name, uniform(g.desc(g.inputs().at(0)).numel(), 1.0f, rng));
  const std::vector<std::int64_t> classes{3, 7};
  exe.set_input_bytes("labels", std::as_bytes(std::span(classes)));
  exe.run();
  out.loss = exe.output("loss")[0];
  for (std::size_t i = 0; i < grads.size(); ++i) out.grads.push_back(exe.output("grad" + std::to_string(i)));
  return out;
}

}  // namespace

TEST_SUITE("autodiff") {
  TEST_CASE("training_graph channels_last: the loss and every gradient of whole networks as built, no activation transposed") {
    // 64 px: at 32 px the last stages are 1x1 and a training batchnorm over 2 values amplifies rounding.
    for (const std::string model : {"resnet50", "efficientnet-b0", "mobilenet-v2"}) {
      INFO(model);
      const Gradients as_built = model_gradients(model, false), moved = model_gradients(model, true);
      CHECK(moved.loss == doctest::Approx(as_built.loss).epsilon(1e-5));
      REQUIRE(moved.grads.size() == as_built.grads.size());
      // Each gradient against its own scale, with a floor at a thousandth of the largest: the bias of
      // a batchnorm that a conv and a training batchnorm follow has a gradient of 0 in exact
      // arithmetic, rounding noise in each layout.
      std::vector<cases::Comparison> each;
      double error = 0.0, energy = 0.0, largest = 0.0;
      for (std::size_t i = 0; i < moved.grads.size(); ++i) {
        each.push_back(cases::compare(moved.grads[i], as_built.grads[i]));
        CHECK(each.back().non_finite == 0);
        error += each.back().error_energy, energy += each.back().want_energy;
        largest = std::max(largest, each.back().want_max_abs);
      }
      double worst = 0.0;  // the largest error, relative to its gradient's scale
      for (const cases::Comparison& c : each) worst = std::max(worst, c.max_abs / std::max(c.want_max_abs, 1e-3 * largest));
      MESSAGE(model << ": NMSE " << error / energy << ", largest relative error " << worst
                    << "; feature-map transposes " << moved.activation_transposes);
      CHECK(error / energy < 1e-8);
      CHECK(worst < 1e-3);
      CHECK(moved.activation_transposes <= 1);  // the input image's, into the first conv
    }
  }

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
    check_curves(build_mlp(), points(), 40, 0.3f, 1e-3f);
  }

  TEST_CASE("the MLP with its parameters as variables that apply_sgd updates: the same steps as through the host") {
    const Net on_device = build_mlp(true);
    const Device ref = Device::open("ref");
    const Run host = train(build_mlp(), ref, 40, points());
    const Run kept = train(on_device, ref, 40, points());
    CHECK(kept.curve == host.curve);  // the same arithmetic on ref, bit for bit
    CHECK(kept.params == host.params);
    check_curves(on_device, points(), 40, 0.3f, 1e-3f);
  }

  TEST_CASE("training_graph: float constants the outputs depend on become parameters, and nothing else") {
    Graph g;
    const Tensor x = g.input("x", {2, 3});
    const Tensor w = g.constant("w", {3, 3}, std::vector<float>(9, 0.5f));
    const Tensor unused = g.constant("unused", {3}, std::vector<float>(3, 1.0f));
    const std::vector<std::int64_t> index{0, 2};
    const Tensor columns = g.constant_bytes("columns", {2}, DType::i64, std::as_bytes(std::span(index)));
    const Tensor y = g.gather(g.matmul(x, w), columns, 1);
    g.output("y", y);
    g.output("first", g.relu(x));
    autodiff::step_counter(g);  // its increment is a constant feeding only its update
    g.assign(g.variable("total", {3}), g.add(g.relu(unused), unused));
    const autodiff::TrainingGraph t = autodiff::training_graph(g);
    REQUIRE(t.params.size() == 1);
    CHECK(t.graph.info(t.params[0]).name == "w");
    CHECK(t.graph.info(t.params[0]).role == Role::Variable);
    std::vector<std::string> constants;
    for (const TensorInfo& info : t.graph.tensors())
      if (info.role == Role::Constant) constants.push_back(info.name);
    CHECK(std::find(constants.begin(), constants.end(), "columns") != constants.end());
    CHECK(std::find(constants.begin(), constants.end(), "unused") != constants.end());
    CHECK(t.graph.variables().size() == 3);  // w, the step counter and "total"
  }

  TEST_CASE("a CNN learns bar orientations to 95 % on held-out images, with the same loss curve on ref and every device") {
    const Net net = build_cnn();
    const Data train_set = bars(11), held_out = bars(12);
    for (const auto& [device, run] : check_curves(net, train_set, 60, 0.1f, 1e-2f)) {
      const double share = accuracy(net, device, run, held_out, kinds);
      MESSAGE(device.info().name << ": held-out accuracy " << share);
      CHECK(share >= 0.95);
    }
  }
}

}  // namespace porta::test
