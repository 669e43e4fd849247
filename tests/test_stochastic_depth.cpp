// Dropout over leading dims (DropoutParams::mask_dims), stochastic depth: whole samples kept and
// scaled or zeroed, at the ratio's rate, drawn as per-element dropout draws over the leading dims
// alone, reproducible from (seed, step), the same on every device; the builder's errors; and the
// models' training builds (models::ModelOptions::training). Gradients: tests/test_autodiff.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "porta/autodiff.hpp"
#include "porta/models.hpp"
#include "porta/porta.hpp"
#include "dropout_runs.hpp"
#include "test_util.hpp"

namespace porta {
namespace {

using test::check_error;
using test::dropout_of_ones;

// The dropout nodes of `g`, in order.
std::vector<DropoutParams> dropouts(const Graph& g) {
  std::vector<DropoutParams> result;
  for (const Node& n : g.nodes())
    if (n.op == OpKind::Dropout) result.push_back(std::get<DropoutParams>(n.params));
  return result;
}

}  // namespace

TEST_SUITE("dropout") {
  TEST_CASE("mask_dims 1 keeps or drops whole samples, at the ratio's rate, kept ones scaled") {
    const Device ref = Device::open("ref");
    constexpr std::int64_t samples = 20000, per_sample = 3 * 5;
    for (const float ratio : {0.1f, 0.5f}) {
      CAPTURE(ratio);
      const std::vector<float> y =
          dropout_of_ones(ref, {samples, 3, 1, 5}, {.ratio = ratio, .seed = 3, .mask_dims = 1}, 4.0f);
      const float scale = static_cast<float>(1.0 / (1.0 - double{ratio}));
      std::int64_t dropped = 0, mixed = 0;
      for (std::int64_t s = 0; s < samples; ++s) {
        const float first = y[static_cast<std::size_t>(s * per_sample)];
        CHECK((first == 0.0f || first == scale));
        for (std::int64_t e = 1; e < per_sample; ++e) mixed += y[static_cast<std::size_t>(s * per_sample + e)] != first;
        dropped += first == 0.0f;
      }
      CHECK(mixed == 0);
      // The binomial's standard deviation is at most 0.0036 here: 0.02 is more than five of them.
      CHECK(std::abs(static_cast<double>(dropped) / samples - ratio) < 0.02);
    }
  }

  TEST_CASE("a mask over k leading dims is per-element dropout's mask over those dims alone") {
    const Device ref = Device::open("ref");
    const Shape shape{6, 7, 3, 2};
    const std::vector<float> whole = dropout_of_ones(ref, shape, {.ratio = 0.4f, .seed = 8, .mask_dims = 0}, 1.0f);
    CHECK((whole == std::vector<float>(whole.size(), whole[0])));
    for (std::int32_t k = 1; k <= 4; ++k) {
      CAPTURE(k);
      const std::vector<float> y = dropout_of_ones(ref, shape, {.ratio = 0.4f, .seed = 8, .mask_dims = k}, 1.0f);
      std::int64_t draws = 1, span = 1;
      for (std::size_t d = 0; d < shape.size(); ++d) (static_cast<std::int32_t>(d) < k ? draws : span) *= shape[d];
      const std::vector<float> per_draw = dropout_of_ones(ref, {draws}, {.ratio = 0.4f, .seed = 8}, 1.0f);
      for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == per_draw[i / static_cast<std::size_t>(span)]);
    }
    CHECK(dropout_of_ones(ref, shape, {.ratio = 0.4f, .seed = 8, .mask_dims = 4}, 1.0f) ==
          dropout_of_ones(ref, shape, {.ratio = 0.4f, .seed = 8}, 1.0f));
  }

  TEST_CASE("a per-sample mask is a function of (seed, step)") {
    const Device ref = Device::open("ref");
    const auto mask = [&](std::uint64_t seed, float step) {
      return dropout_of_ones(ref, {257, 3, 3}, {.ratio = 0.5f, .seed = seed, .mask_dims = 1}, step);
    };
    CHECK(mask(3, 5.0f) == mask(3, 5.0f));
    CHECK(mask(3, 5.0f) != mask(3, 6.0f));
    CHECK(mask(3, 5.0f) != mask(4, 5.0f));
  }

  TEST_CASE("mask_dims outside -1 .. rank(x) is an error") {
    Graph g;
    const Tensor x = g.input("x", {4, 3});
    const float one[] = {1.0f};
    const Tensor step = g.constant("step", {1}, one);
    for (const std::int32_t k : {-2, 3, 100})
      check_error([&] { g.dropout(x, step, {.mask_dims = k}, "drop"); }, ErrorCode::InvalidArgument,
                  {"'drop'", "mask_dims", "-1", "[4, 3]"});
  }

  TEST_CASE("every device draws ref's per-sample masks, across its chunks and work-items") {
    const Device ref = Device::open("ref");
    for (const std::string& spec : test::devices_under_test()) {
      const std::optional<Device> device = test::open_or_skip(spec);
      if (!device) continue;
      for (const DType t : {DType::f32, DType::f16, DType::bf16})
        for (const Shape& shape : {Shape{1001, 37}, Shape{3, 40001}, Shape{50, 3, 5, 7}}) {
          CAPTURE(spec);
          CAPTURE(t);
          CAPTURE(to_string(shape));
          const DropoutParams p{.ratio = 0.3f, .seed = 21, .mask_dims = 1};
          CHECK(dropout_of_ones(*device, shape, p, 9.0f, t) == dropout_of_ones(ref, shape, p, 9.0f, t));
        }
    }
  }

  TEST_CASE("training builds: EfficientNet's stochastic depth and classifier dropout, MobileNet-V2's dropout") {
    CHECK(dropouts(models::efficientnet(0)).empty());  // inference graphs have none
    CHECK(dropouts(models::mobilenet_v2()).empty());
    const std::vector<DropoutParams> b0 = dropouts(models::efficientnet(0, {.training = true}));
    // B0's nine residual blocks (the first block, whose drop is 0, has no residual), then the classifier.
    REQUIRE(b0.size() == 10);
    for (std::size_t i = 0; i + 1 < b0.size(); ++i) {
      CHECK(b0[i].mask_dims == 1);
      CHECK(b0[i].ratio > (i == 0 ? 0.0f : b0[i - 1].ratio));
      CHECK(b0[i].ratio < 0.2f);
    }
    CHECK(b0.back().mask_dims == -1);
    CHECK(b0.back().ratio == 0.2f);
    CHECK(dropouts(models::efficientnet(7, {.resolution = 64, .training = true})).back().ratio == 0.5f);
    const std::vector<DropoutParams> mobilenet = dropouts(models::mobilenet_v2({.training = true}));
    REQUIRE(mobilenet.size() == 1);
    CHECK(mobilenet[0].ratio == 0.2f);
    // The weights do not depend on the option: the training build adds only its step counter's increment.
    const auto weights = [](const Graph& g) {
      std::map<std::string, std::vector<std::byte>> result;
      for (const TensorInfo& t : g.tensors())
        if (t.role == Role::Constant) result[t.name] = *t.data;
      return result;
    };
    const auto plain = weights(models::efficientnet(0, {.resolution = 32}));
    const auto trained = weights(models::efficientnet(0, {.resolution = 32, .training = true}));
    CHECK(trained.size() == plain.size() + 1);
    for (const auto& [name, data] : plain) CHECK((trained.contains(name) && trained.at(name) == data));
  }

  TEST_CASE("efficientnet-b0's training forward pass, stochastic depth on, is the same on cpu as on ref") {
    const Graph inference = models::efficientnet(0, {.batch = 4, .resolution = 32, .classes = 10, .training = true});
    autodiff::TrainingGraph t = autodiff::training_graph(inference);
    Graph& g = t.graph;
    const Tensor labels = g.input("labels", {4}, DType::i64);
    g.output("loss", autodiff::softmax_cross_entropy(g, g.outputs().at(0).second, labels));
    const auto losses = [&](const Device& device) {
      Executable exe = device.compile(g);
      std::vector<float> x(4 * 3 * 32 * 32);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.1f);
      exe.set_input("input", x);
      exe.set_input("labels", std::vector<float>{1, 3, 5, 7});
      std::vector<float> result;
      for (int run = 0; run < 3; ++run) exe.run(), result.push_back(exe.output("loss")[0]);
      CHECK(exe.variable("dropout.step") == std::vector<float>{3.0f});
      return result;
    };
    const std::vector<float> ref = losses(Device::open("ref")), cpu = losses(Device::open("cpu"));
    for (std::size_t i = 0; i < ref.size(); ++i) {
      CHECK(std::isfinite(ref[i]));
      CHECK(cpu[i] == doctest::Approx(ref[i]).epsilon(1e-4));
    }
  }
}

}  // namespace porta
