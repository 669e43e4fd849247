// Dropout (Graph::dropout): the Philox-4x32-10 generator against its published answers, the mask's
// statistics, its reproducibility from (seed, step), the run counter, identity at ratio 0, the
// builder's errors, and one mask on every device. The op cases compare every device with ref bit for
// bit (tests/op_cases/cases_dropout.cpp); tests/test_autodiff.cpp checks the gradient.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <vector>

#include "backends/common/philox.h"
#include "porta/autodiff.hpp"
#include "porta/porta.hpp"
#include "dropout_runs.hpp"
#include "test_util.hpp"

namespace porta {
namespace {

using test::check_error;
using test::dropout_of_ones;

}  // namespace

TEST_SUITE("dropout") {
  TEST_CASE("Philox-4x32-10 gives the Random123 known answers") {
    struct Known {
      std::array<philox_u32, 4> counter;
      philox_u32 k0, k1;
      std::array<philox_u32, 4> want;
    };
    const Known known[] = {
        {{0u, 0u, 0u, 0u}, 0u, 0u, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
        {{~0u, ~0u, ~0u, ~0u}, ~0u, ~0u, {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
        {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, 0xa4093822u, 0x299f31d0u,
         {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
    };
    for (const Known& k : known) {
      std::array<philox_u32, 4> c = k.counter;
      philox4x32_10(c.data(), k.k0, k.k1);
      CHECK(c == k.want);
    }
  }

  TEST_CASE("the share of dropped elements is the ratio; the kept ones are scaled by 1 / (1 - ratio)") {
    const Device ref = Device::open("ref");
    constexpr std::int64_t n = 1 << 20;
    for (const float ratio : {0.1f, 0.5f, 0.9f}) {
      CAPTURE(ratio);
      const std::vector<float> y = dropout_of_ones(ref, {n}, {.ratio = ratio, .seed = 7}, 3.0f);
      const float scale = static_cast<float>(1.0 / (1.0 - double{ratio}));
      std::int64_t zeros = 0, others = 0;
      for (const float v : y) zeros += v == 0.0f, others += v != 0.0f && v != scale;
      CHECK(others == 0);
      // The binomial's standard deviation is at most 0.0005 here: 0.003 is six of them.
      CHECK(std::abs(static_cast<double>(zeros) / n - ratio) < 0.003);
    }
  }

  TEST_CASE("a mask is a function of (seed, step): equal for equal ones, different otherwise") {
    const Device ref = Device::open("ref");
    const auto mask = [&](std::uint64_t seed, float step) {
      return dropout_of_ones(ref, {4099}, {.ratio = 0.5f, .seed = seed}, step);
    };
    CHECK(mask(3, 5.0f) == mask(3, 5.0f));
    CHECK(mask(3, 5.0f) != mask(3, 6.0f));
    CHECK(mask(3, 5.0f) != mask(4, 5.0f));
    CHECK(mask(3, 5.0f) == mask(3, 5.75f));  // the step's integer part
  }

  TEST_CASE("ratio 0 passes x on") {
    Graph g;
    const float s[] = {2.0f};
    g.output("y", g.dropout(g.input("x", {5, 7}), g.constant("step", {1}, s), {.ratio = 0.0f, .seed = 1}));
    Executable exe = Device::open("ref").compile(g);
    std::vector<float> x(35);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.37f - 5.0f;
    exe.set_input("x", x);
    exe.run();
    CHECK(exe.output("y") == x);
  }

  TEST_CASE("step_counter: each run draws a new mask, and a fresh executable repeats the sequence") {
    Graph g;
    const Tensor step = autodiff::step_counter(g);
    g.output("y", g.dropout(g.input("x", {1000}), step, {.ratio = 0.3f, .seed = 99}));
    const Device ref = Device::open("ref");
    const auto runs = [&] {
      Executable exe = ref.compile(g);
      exe.set_input("x", std::vector<float>(1000, 1.0f));
      std::vector<std::vector<float>> ys;
      for (int i = 0; i < 3; ++i) exe.run(), ys.push_back(exe.output("y"));
      CHECK(exe.variable("dropout.step") == std::vector<float>{3.0f});
      return ys;
    };
    const auto first = runs();
    CHECK(first[0] != first[1]);
    CHECK(first[1] != first[2]);
    CHECK(runs() == first);
    CHECK(first[1] == dropout_of_ones(ref, {1000}, {.ratio = 0.3f, .seed = 99}, 1.0f));
  }

  TEST_CASE("a ratio outside [0, 1) and a step that is not one f32 element are errors") {
    Graph g;
    const Tensor x = g.input("x", {4});
    const float one[] = {1.0f}, two[] = {1.0f, 2.0f};
    const Tensor step = g.constant("step", {1}, one);
    for (const float ratio : {-0.1f, 1.0f, 1.5f, std::nanf("")})
      check_error([&] { g.dropout(x, step, {.ratio = ratio}, "drop"); }, ErrorCode::InvalidArgument,
                  {"'drop'", "[0, 1)"});
    check_error([&] { g.dropout(x, g.constant("steps", {2}, two), {}, "drop"); }, ErrorCode::InvalidArgument,
                {"'drop'", "one f32 element"});
    check_error([&] { g.dropout(x, g.constant("half", {1}, one, DType::f16), {}, "drop"); },
                ErrorCode::InvalidArgument, {"'drop'", "one f32 element"});
  }

  TEST_CASE("every device draws ref's mask, bit for bit, in f32, f16 and bf16") {
    const Device ref = Device::open("ref");
    for (const std::string& spec : test::devices_under_test()) {
      const std::optional<Device> device = test::open_or_skip(spec);
      if (!device) continue;
      for (const DType t : {DType::f32, DType::f16, DType::bf16}) {
        CAPTURE(spec);
        CAPTURE(t);
        CHECK(dropout_of_ones(*device, {100003}, {.ratio = 0.25f, .seed = 5}, 17.0f, t) ==
              dropout_of_ones(ref, {100003}, {.ratio = 0.25f, .seed = 5}, 17.0f, t));
      }
    }
  }
}

}  // namespace porta
