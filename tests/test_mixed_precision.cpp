// Mixed-precision training: an inference CNN made trainable in bf16 and in f16 (with loss scaling)
// around f32 master weights learns the bars task to 95 % on ref and every device under test; a step
// whose scaled gradients overflow is skipped and halves the scale; good steps double it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "test_util.hpp"
#include "training_data.hpp"

namespace porta::test {
namespace {

constexpr autodiff::SgdOptions sgd{.learning_rate = 0.1f, .momentum = 0.9f, .weight_decay = 1e-4f};

// The CNN of test_training.cpp as an inference graph of constants: conv 3x3 (8) -> batchnorm -> relu
// -> max pool 2x2 -> conv 3x3 (16, bias, fused relu) -> global average pool -> gemm, output "logits".
Graph cnn_inference() {
  std::mt19937 rng(5);
  Graph g;
  const auto he = [&](std::int64_t fan_in, std::size_t n) { return uniform(n, std::sqrt(6.0f / fan_in), rng); };
  const auto filled = [&](const char* name, std::int64_t n, float value) {
    return g.constant(name, {n}, std::vector<float>(static_cast<std::size_t>(n), value));
  };
  const Tensor x = g.input("x", {images, 1, side, side});
  const Tensor w1 = g.constant("w1", {8, 1, 3, 3}, he(9, 8 * 9));
  const Tensor w2 = g.constant("w2", {16, 8, 3, 3}, he(72, 16 * 72));
  const Tensor w3 = g.constant("w3", {16, kinds}, he(16, 16 * kinds));
  const Tensor c1 = g.conv2d(x, w1, {.pad = {1, 1, 1, 1}});
  const Tensor n1 = g.batchnorm(c1, filled("scale", 8, 1.0f), filled("shift", 8, 0.0f), filled("mean", 8, 0.0f),
                                filled("var", 8, 1.0f), {});
  const Tensor p1 = g.max_pool2d(g.relu(n1), {.kernel = {2, 2}, .stride = {2, 2}});
  const Tensor h2 = g.conv2d(p1, w2, {.pad = {1, 1, 1, 1}, .activation = Activation::Relu}, filled("b2", 16, 0.0f));
  g.output("logits", g.gemm(g.flatten(g.global_avg_pool(h2)), w3, {}, filled("b3", kinds, 0.0f)));
  return g;
}

// The CNN's training step in `precision`: softmax cross-entropy to one-hot "target" and SGD, with
// the gradients loss-scaled where `scaling` is given (output "finite": whether the step applied).
Graph mixed_step(DType precision, const autodiff::LossScaleOptions* scaling) {
  autodiff::TrainingGraph t = autodiff::training_graph(cnn_inference(), {.precision = precision});
  Graph& g = t.graph;
  const Tensor target = g.input("target", {images, kinds});
  const Tensor loss = autodiff::softmax_cross_entropy(g, g.outputs().at(0).second, target);
  g.output("loss", loss);
  if (!scaling) {
    autodiff::apply_sgd(g, t.params, autodiff::gradients(g, loss, t.params), sgd);
    return std::move(g);
  }
  const autodiff::ScaledGradients s = autodiff::scaled_gradients(g, loss, t.params, *scaling);
  g.output("finite", s.finite);
  autodiff::apply_sgd(g, t.params, s.grads, sgd, s.finite);
  return std::move(g);
}

std::vector<float> run_on(Executable& exe, const Data& data) {
  exe.set_input("x", data.x);
  exe.set_input("target", data.onehot);
  exe.run();
  return exe.output("loss");
}

// The share of `data`'s images whose largest logit is their class, under `trained`'s variables.
double accuracy(const Device& device, const Graph& step, const Executable& trained, const Data& data) {
  Executable exe = device.compile(step);
  for (const std::string& name : trained.variable_names()) exe.set_variable_bytes(name, trained.variable_bytes(name));
  run_on(exe, data);
  const std::vector<float> logits = exe.output("logits");
  std::size_t right = 0;
  for (std::int64_t r = 0; r < images; ++r) {
    const auto row = logits.begin() + r * kinds;
    right += data.onehot[static_cast<std::size_t>(r * kinds + (std::max_element(row, row + kinds) - row))] == 1.0f;
  }
  return static_cast<double>(right) / static_cast<double>(images);
}

// Every variable's bytes, by name.
std::vector<std::vector<std::byte>> snapshot(const Executable& exe) {
  std::vector<std::vector<std::byte>> out;
  for (const std::string& name : exe.variable_names()) out.push_back(exe.variable_bytes(name));
  return out;
}

}  // namespace

TEST_SUITE("autodiff") {
  TEST_CASE("mixed precision: the CNN learns bars to 95 % in bf16 and in loss-scaled f16, on ref and every device") {
    const Data train_set = bars(11), held_out = bars(12);
    const autodiff::LossScaleOptions scaling{.initial_scale = 1024.0f, .growth_interval = 20};
    for (const DType precision : {DType::bf16, DType::f16}) {
      const Graph step = mixed_step(precision, precision == DType::f16 ? &scaling : nullptr);
      for (const Device& device : ref_and_devices_under_test()) {
        INFO(to_string(precision) << " on " << device.info().name);
        Executable exe = device.compile(step);
        const float first = run_on(exe, train_set)[0];
        float last = first;
        for (int i = 1; i < 60; ++i) last = run_on(exe, train_set)[0];
        CHECK(exe.variable("w1").size() == 72);  // the master weights: f32 variables
        CHECK(exe.variable_bytes("w1").size() == 72 * sizeof(float));
        const double share = accuracy(device, step, exe, held_out);
        MESSAGE(to_string(precision) << " on " << device.info().name << ": loss " << first << " -> " << last
                                     << ", held-out accuracy " << share);
        CHECK(last < 0.1f * first);
        CHECK(share >= 0.95);
      }
    }
  }

  TEST_CASE("loss scaling: an overflowing step is skipped and halves the scale; good steps double it") {
    const Data data = bars(11);
    const autodiff::LossScaleOptions huge{.initial_scale = 1e38f, .growth_interval = 2};
    const Graph overflowing = mixed_step(DType::f16, &huge);
    const autodiff::LossScaleOptions modest{.initial_scale = 256.0f, .growth_interval = 2};
    const Graph growing = mixed_step(DType::f16, &modest);
    for (const Device& device : ref_and_devices_under_test()) {
      INFO("device " << device.info().name);
      Executable exe = device.compile(overflowing);
      const std::vector<std::vector<std::byte>> before = snapshot(exe);
      run_on(exe, data);
      CHECK(exe.output("finite")[0] == 0.0f);
      CHECK(exe.variable("loss_scale")[0] == 1e38f * 0.5f);
      CHECK(exe.variable("loss_scale.good_steps")[0] == 0.0f);
      const std::vector<std::string> names = exe.variable_names();
      const std::vector<std::vector<std::byte>> after = snapshot(exe);
      for (std::size_t i = 0; i < names.size(); ++i)
        if (!names[i].starts_with("loss_scale")) CHECK_MESSAGE(after[i] == before[i], "variable " << names[i]);
      Executable good = device.compile(growing);
      const std::vector<float> w1 = good.variable("w1");
      for (const float expected : {256.0f, 256.0f, 512.0f, 512.0f}) {
        CHECK(good.variable("loss_scale")[0] == expected);
        run_on(good, data);
        CHECK(good.output("finite")[0] == 1.0f);
      }
      CHECK(good.variable("loss_scale")[0] == 1024.0f);
      CHECK(good.variable("w1") != w1);
    }
  }

  TEST_CASE("loss scaling in two graphs: unscale_gradients of scaled gradients summed elsewhere") {
    Graph update;
    const autodiff::LossScaleOptions o{.initial_scale = 8.0f, .growth_interval = 1};
    const Tensor scaled = update.input("scaled", {3});
    const Tensor scale = autodiff::loss_scale_variable(update, o);
    const autodiff::ScaledGradients u = autodiff::unscale_gradients(update, std::vector<Tensor>{scaled}, scale, o);
    update.output("grad", u.grads.at(0));
    update.output("finite", update.cast(u.finite, DType::f32));
    for (const Device& device : ref_and_devices_under_test()) {
      INFO("device " << device.info().name);
      Executable exe = device.compile(update);
      exe.set_input("scaled", std::vector<float>{8.0f, -16.0f, 24.0f});
      exe.run();
      CHECK(exe.output("grad") == std::vector<float>{1.0f, -2.0f, 3.0f});
      CHECK(exe.output("finite")[0] == 1.0f);
      CHECK(exe.variable("loss_scale")[0] == 16.0f);  // one good step doubles it
      exe.set_input("scaled", std::vector<float>{1.0f, std::numeric_limits<float>::infinity(), 0.0f});
      exe.run();
      CHECK(exe.output("finite")[0] == 0.0f);
      CHECK(exe.variable("loss_scale")[0] == 8.0f);
    }
    CHECK_THROWS_WITH_AS(autodiff::unscale_gradients(update, std::vector<Tensor>{scaled}, scaled, o),
                         doctest::Contains("loss_scale_variable's"), Error);
  }

  TEST_CASE("mixed precision: bf16 products, f32 parameters and loss; wrong dtypes of precision or apply_if fail") {
    CHECK_THROWS_WITH_AS(autodiff::training_graph(cnn_inference(), {.precision = DType::i32}),
                         doctest::Contains("not a float dtype"), Error);
    autodiff::TrainingGraph t = autodiff::training_graph(cnn_inference(), {.precision = DType::bf16});
    Graph& g = t.graph;
    const Tensor target = g.input("target", {images, kinds});
    const Tensor loss = autodiff::softmax_cross_entropy(g, g.outputs().at(0).second, target);
    CHECK(g.dtype(loss) == DType::f32);
    for (const Tensor p : t.params) CHECK(g.dtype(p) == DType::f32);
    // The convolutions and the gemm compute in bf16.
    std::size_t low_products = 0;
    for (const Node& n : g.nodes())
      if (n.op == OpKind::Conv2d || n.op == OpKind::Gemm) low_products += g.dtype(n.output) == DType::bf16;
    CHECK(low_products == 3);
    CHECK_THROWS_WITH_AS(autodiff::apply_sgd(g, t.params, autodiff::gradients(g, loss, t.params), sgd, loss),
                         doctest::Contains("apply_if must be a bool [1] tensor"), Error);
    CHECK_THROWS_WITH_AS(autodiff::scaled_gradients(g, loss, t.params, {.initial_scale = 0.0f}),
                         doctest::Contains("must be positive and finite"), Error);
  }
}

}  // namespace porta::test
