// AdamW driving variables against PyTorch's formula, and checkpoints: a training run saved after k
// steps and loaded into a fresh executable continues exactly as the run that never stopped.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <random>

#include "checkpoint.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

std::vector<float> random_values(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// x [8, 5] -> gemm + tanh -> gemm -> softmax -> mean squared error to `target`; AdamW on w1, b1, w2.
Graph adamw_mlp(const autodiff::AdamWOptions& options) {
  std::mt19937 rng(11);
  Graph g;
  const Tensor x = g.input("x", {8, 5}), target = g.input("target", {8, 3});
  const Tensor w1 = g.variable("w1", {5, 6}, random_values(30, rng));
  const Tensor b1 = g.variable("b1", {6}, random_values(6, rng));
  const Tensor w2 = g.variable("w2", {6, 3}, random_values(18, rng));
  const Tensor p = g.softmax(g.gemm(g.tanh(g.gemm(x, w1, {}, b1)), w2));
  const Tensor loss = autodiff::mean_squared_error(g, p, target);
  g.output("loss", loss);
  const Tensor params[] = {w1, b1, w2};
  autodiff::apply_adamw(g, params, autodiff::gradients(g, loss, params), options);
  return g;
}

// adamw_mlp's network (its loss on the raw outputs) as an inference graph of constants, trained in f16
// around f32 master weights with dynamic loss scaling (the scale doubling every 2 good steps) and AdamW.
Graph f16_mlp() {
  std::mt19937 rng(11);
  Graph inference;
  const Tensor x = inference.input("x", {8, 5});
  const Tensor w1 = inference.constant("w1", {5, 6}, random_values(30, rng));
  const Tensor b1 = inference.constant("b1", {6}, random_values(6, rng));
  const Tensor w2 = inference.constant("w2", {6, 3}, random_values(18, rng));
  inference.output("logits", inference.gemm(inference.tanh(inference.gemm(x, w1, {}, b1)), w2));
  autodiff::TrainingGraph t = autodiff::training_graph(inference, {.precision = DType::f16});
  Graph& g = t.graph;
  const Tensor loss = autodiff::mean_squared_error(g, g.outputs().at(0).second, g.input("target", {8, 3}));
  g.output("loss", loss);
  const autodiff::ScaledGradients s =
      autodiff::scaled_gradients(g, loss, t.params, {.initial_scale = 512.0f, .growth_interval = 2});
  autodiff::apply_adamw(g, t.params, s.grads, {.learning_rate = 0.02f}, s.finite);
  return std::move(g);
}

// Runs `steps` training steps on fixed data; returns the losses.
std::vector<float> train(Executable& exe, int steps) {
  std::mt19937 rng(5);
  exe.set_input("x", random_values(40, rng));
  exe.set_input("target", random_values(24, rng));
  std::vector<float> losses;
  for (int i = 0; i < steps; ++i) {
    exe.run();
    losses.push_back(exe.output("loss")[0]);
  }
  return losses;
}

// Each variable of `values` (name -> dtype and little-endian bytes, 4 elements), read as an output too.
struct Stored {
  std::string name;
  DType dtype;
  std::vector<std::byte> bytes;
};

template <class T>
Stored stored(std::string name, DType dtype, std::vector<T> values) {
  const auto bytes = std::as_bytes(std::span(values));
  return {std::move(name), dtype, {bytes.begin(), bytes.end()}};
}

Graph variables_graph(const std::vector<Stored>& values) {
  Graph g;
  for (const Stored& v : values) {
    const auto bytes = std::make_shared<const std::vector<std::byte>>(v.bytes);
    g.output(v.name + ".out", g.variable_bytes(v.name, {4}, v.dtype, bytes));
  }
  return g;
}

// A folder under the temporary directory, empty, removed again at the end of the scope.
struct TempFolder {
  std::filesystem::path path;
  explicit TempFolder(const std::string& name) : path(std::filesystem::temp_directory_path() / name) {
    std::filesystem::remove_all(path);
  }
  ~TempFolder() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_SUITE("autodiff") {
  TEST_CASE("apply_adamw: three steps on random data match PyTorch's AdamW formula computed in double") {
    const autodiff::AdamWOptions o{.learning_rate = 0.05f, .beta1 = 0.8f, .beta2 = 0.9f, .epsilon = 1e-6f,
                                   .weight_decay = 0.1f};
    std::mt19937 rng(3);
    const std::vector<float> start = random_values(7, rng);
    Graph g;
    const Tensor param = g.variable("p", {7}, start), grad = g.input("grad", {7});
    const Tensor params[] = {param}, grads[] = {grad};
    autodiff::apply_adamw(g, params, grads, o);
    Executable exe = Device::open("ref").compile(g);
    std::vector<double> p(start.begin(), start.end()), m(7, 0.0), v(7, 0.0);
    for (int t = 1; t <= 3; ++t) {
      const std::vector<float> d = random_values(7, rng);
      exe.set_input("grad", d);
      exe.run();
      for (std::size_t i = 0; i < 7; ++i) {  // torch.optim.AdamW, amsgrad off
        p[i] *= 1.0 - double{o.learning_rate} * o.weight_decay;
        m[i] = o.beta1 * m[i] + (1.0 - o.beta1) * d[i];
        v[i] = o.beta2 * v[i] + (1.0 - o.beta2) * d[i] * d[i];
        const double c1 = 1.0 - std::pow(double{o.beta1}, t), c2 = 1.0 - std::pow(double{o.beta2}, t);
        p[i] -= o.learning_rate / c1 * m[i] / (std::sqrt(v[i]) / std::sqrt(c2) + o.epsilon);
      }
      const std::vector<float> got = exe.variable("p"), got_m = exe.variable("p.m"), got_v = exe.variable("p.v");
      for (std::size_t i = 0; i < 7; ++i) {
        INFO("step " << t << ", element " << i);
        CHECK(got[i] == doctest::Approx(p[i]).epsilon(1e-5));
        CHECK(got_m[i] == doctest::Approx(m[i]).epsilon(1e-5));
        CHECK(got_v[i] == doctest::Approx(v[i]).epsilon(1e-5));
      }
      CHECK(exe.variable("adamw.step") == std::vector<float>{static_cast<float>(t)});
    }
  }

  TEST_CASE("checkpoint: 5 AdamW steps, save, load into a fresh executable, 5 more == 10 straight, bit for bit") {
    const Graph g = adamw_mlp({.learning_rate = 0.02f});
    for (const std::string spec : {"ref", "cpu"}) {
      INFO("device " << spec);
      const Device device = Device::open(spec);
      Executable straight = device.compile(g);
      const std::vector<float> losses = train(straight, 10);
      CHECK(losses.back() < losses.front());
      const auto folder = std::filesystem::temp_directory_path() / ("porta-checkpoint-test-" + spec);
      std::filesystem::remove_all(folder);
      {
        Executable first = device.compile(g);
        CHECK(train(first, 5) == std::vector<float>(losses.begin(), losses.begin() + 5));
        checkpoint::save(first, folder);
      }
      CHECK(std::filesystem::exists(folder / "adamw.step.npy"));
      CHECK(std::filesystem::exists(folder / "w1.m.npy"));
      Executable resumed = device.compile(g);
      checkpoint::load(resumed, folder);
      CHECK(train(resumed, 5) == std::vector<float>(losses.begin() + 5, losses.end()));
      for (const std::string& name : straight.variable_names())
        CHECK_MESSAGE(resumed.variable_bytes(name) == straight.variable_bytes(name), "variable " << name);
      std::filesystem::remove_all(folder);
    }
  }

  TEST_CASE("checkpoint: f16 mixed precision with loss scaling, 3 steps, save, load, 3 more == 6 straight, bit for bit") {
    const Graph g = f16_mlp();
    const Device device = Device::open("cpu");
    Executable straight = device.compile(g);
    const std::vector<float> losses = train(straight, 6);
    CHECK(losses.back() < losses.front());
    CHECK(straight.variable("loss_scale")[0] == 4096.0f);  // doubled after steps 2, 4 and 6
    const TempFolder folder("porta-checkpoint-test-f16");
    {
      Executable first = device.compile(g);
      CHECK(train(first, 3) == std::vector<float>(losses.begin(), losses.begin() + 3));
      checkpoint::save(first, folder.path);
    }
    CHECK(std::filesystem::exists(folder.path / "loss_scale.npy"));
    Executable resumed = device.compile(g);
    checkpoint::load(resumed, folder.path);
    CHECK(resumed.variable("loss_scale")[0] == 1024.0f);
    CHECK(train(resumed, 3) == std::vector<float>(losses.begin() + 3, losses.end()));
    for (const std::string& name : straight.variable_names())
      CHECK_MESSAGE(resumed.variable_bytes(name) == straight.variable_bytes(name), "variable " << name);
  }

  TEST_CASE("checkpoint: file names escape what a file system may refuse; a missing or misshapen file is an error") {
    CHECK(checkpoint::file_name("layer1/w:0") == "layer1%2Fw%3A0.npy");
    CHECK(checkpoint::file_name("conv.weight") == "conv.weight.npy");
    Graph g;
    const Tensor v = g.variable("v", {2});
    g.assign(v, g.relu(g.input("x", {2})));
    Executable exe = Device::open("ref").compile(g);
    const auto folder = std::filesystem::temp_directory_path() / "porta-checkpoint-missing";
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);
    check_error([&] { checkpoint::load(exe, folder); }, ErrorCode::NotFound, {"no file v.npy", "variable 'v'"});
    Graph other;
    const Tensor w = other.variable("v", {3});
    other.assign(w, other.relu(other.input("x", {3})));
    checkpoint::save(Device::open("ref").compile(other), folder);
    check_error([&] { checkpoint::load(exe, folder); }, ErrorCode::ShapeMismatch, {"[3]", "variable 'v' [2]"});
    std::filesystem::remove_all(folder);
  }

  TEST_CASE("checkpoint: every dtype saves and loads bit for bit; another dtype converts only where exact") {
    using Limits64 = std::numeric_limits<std::int64_t>;
    // What a float in between would change: i64 past 2^24 and 2^53, NaN payloads, subnormals, -0.
    const std::vector<Stored> values = {
        stored<std::uint32_t>("f32", DType::f32, {0x3f800000u, 0x7fa00001u, 0x00000001u, 0x80000000u}),
        stored<std::uint16_t>("f16", DType::f16, {0x7d01, 0x0001, 0xfc00, 0x3c00}),
        stored<std::uint16_t>("bf16", DType::bf16, {0x7f81, 0xffa1, 0x0001, 0x8000}),
        stored<std::int64_t>("i64", DType::i64, {(std::int64_t{1} << 53) + 1, -(1 << 24) - 1, Limits64::max(),
                                                 Limits64::min()}),
        stored<std::int32_t>("i32", DType::i32, {(1 << 24) + 1, std::numeric_limits<std::int32_t>::min(), -1, 7}),
        stored<std::uint8_t>("bool", DType::boolean, {0, 1, 1, 0})};
    std::vector<Stored> zeros = values;
    for (Stored& z : zeros) std::fill(z.bytes.begin(), z.bytes.end(), std::byte{0});
    const TempFolder folder("porta-checkpoint-dtypes");
    const Device ref = Device::open("ref");
    checkpoint::save(ref.compile(variables_graph(values)), folder.path);
    Executable loaded = ref.compile(variables_graph(zeros));
    checkpoint::load(loaded, folder.path);
    for (const Stored& v : values) CHECK_MESSAGE(loaded.variable_bytes(v.name) == v.bytes, "variable " << v.name);

    // An i64 file into an i32 variable: exact, and out of range an error; floats into integers refused.
    const auto load_as = [&](Stored target) {
      target.name = "i64";
      Executable exe = ref.compile(variables_graph({target}));
      checkpoint::load(exe, folder.path);
      return exe.variable_bytes("i64");
    };
    const TempFolder small("porta-checkpoint-narrow");
    checkpoint::save(ref.compile(variables_graph({stored<std::int64_t>("i64", DType::i64, {16777217, -3, 0, 1})})),
                     small.path);
    Executable narrow = ref.compile(variables_graph({stored<std::int32_t>("i64", DType::i32, {0, 0, 0, 0})}));
    checkpoint::load(narrow, small.path);
    CHECK(narrow.variable_bytes("i64") == stored<std::int32_t>("", DType::i32, {16777217, -3, 0, 1}).bytes);
    check_error([&] { load_as(stored<std::int32_t>("", DType::i32, {0, 0, 0, 0})); }, ErrorCode::InvalidArgument,
                {"i64.npy", "element 0", "9007199254740993", "does not fit i32"});
    check_error([&] { load_as(stored<float>("", DType::f32, {0, 0, 0, 0})); }, ErrorCode::DTypeMismatch,
                {"i64.npy", "i64 data for a f32 tensor"});
  }
}

}  // namespace porta::test
