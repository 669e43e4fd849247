// Dropout on shards of a batch (DropoutParams::batch_offset): the shards of a batch, each drawn at
// its first sample's offset, together draw the whole batch's mask on every device, for every
// mask_dims; the builder's errors; and training_graph's batch_offset, which data-parallel training
// sets on each rank's graph.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "porta/autodiff.hpp"
#include "porta/porta.hpp"
#include "dropout_runs.hpp"
#include "test_util.hpp"

namespace porta {
namespace {

using test::check_error;
using test::dropout_of_ones;

// dropout_of_ones of `shape` cut along dim 0 at `cuts`, each part drawn at its offset, concatenated.
std::vector<float> sharded(const Device& device, const Shape& shape, DropoutParams p,
                           const std::vector<std::int64_t>& cuts, DType dtype) {
  std::vector<float> y;
  std::int64_t begin = 0;
  std::vector<std::int64_t> ends = cuts;
  ends.push_back(shape[0]);
  for (const std::int64_t end : ends) {
    Shape part = shape;
    part[0] = end - begin;
    p.batch_offset = begin;
    const std::vector<float> piece = dropout_of_ones(device, part, p, 6.0f, dtype);
    y.insert(y.end(), piece.begin(), piece.end());
    begin = end;
  }
  return y;
}

}  // namespace

TEST_SUITE("dropout") {
  TEST_CASE("shards drawn at their batch_offset draw the whole batch's mask, on every device") {
    for (const Device& device : test::ref_and_devices_under_test()) {
      const DType dtypes[] = {DType::f32, DType::bf16};
      for (const DType t : dtypes)
        for (const Shape& shape : {Shape{7, 19}, Shape{9, 3, 1, 5}, Shape{5, 40001}, Shape{2, 1}})
          for (std::int32_t mask_dims = -1; mask_dims <= static_cast<std::int32_t>(shape.size()); ++mask_dims) {
            CAPTURE(device.info().spec);
            CAPTURE(t);
            CAPTURE(to_string(shape));
            CAPTURE(mask_dims);
            const DropoutParams p{.ratio = 0.4f, .seed = 31, .mask_dims = mask_dims};
            const std::vector<float> whole = dropout_of_ones(device, shape, p, 6.0f, t);
            const std::int64_t half = shape[0] / 2;
            CHECK(sharded(device, shape, p, {half}, t) == whole);  // two halves, of odd sizes or of one sample
            if (shape[0] > 2) CHECK(sharded(device, shape, p, {1, shape[0] - 1}, t) == whole);
          }
    }
  }

  TEST_CASE("a shard's mask is the whole batch's rows, not a copy of the first shard's") {
    const Device ref = Device::open("ref");
    const DropoutParams p{.ratio = 0.5f, .seed = 4};
    const std::vector<float> at0 = dropout_of_ones(ref, {8, 16}, p, 1.0f);
    DropoutParams later = p;
    later.batch_offset = 8;
    CHECK(dropout_of_ones(ref, {8, 16}, later, 1.0f) != at0);
    const std::vector<float> whole = dropout_of_ones(ref, {16, 16}, p, 1.0f);
    CHECK(dropout_of_ones(ref, {8, 16}, later, 1.0f) == std::vector<float>(whole.begin() + 128, whole.end()));
  }

  TEST_CASE("a batch_offset outside 0 .. 2^31 - 1 is an error") {
    Graph g;
    const float one[] = {1.0f};
    const Tensor step = g.constant("step", {1}, one);
    const Tensor x = g.input("x", {4, 3});
    check_error([&] { g.dropout(x, step, {.batch_offset = -1}, "drop"); }, ErrorCode::InvalidArgument,
                {"'drop'", "batch_offset -1", "0 .. 2^31 - 1"});
    check_error([&] { g.dropout(x, step, {.batch_offset = std::int64_t{1} << 31}, "far"); },
                ErrorCode::InvalidArgument, {"'far'", "batch_offset 2147483648"});
    check_error([&] { (void)autodiff::training_graph(Graph{}, {.batch_offset = -3}); }, ErrorCode::InvalidArgument,
                {"batch_offset -3"});
  }

  TEST_CASE("training_graph's batch_offset refuses a dropout whose x does not lead with the batch") {
    Graph inference;
    const Tensor step = autodiff::step_counter(inference);
    const Tensor x = inference.transpose(inference.input("input", {6, 3}), {1, 0});
    inference.output("y", inference.dropout(x, step, {.ratio = 0.3f, .seed = 1}, "across"));
    check_error([&] { (void)autodiff::training_graph(inference, {.batch_offset = 6}); }, ErrorCode::Unsupported,
                {"'across'", "lead with the batch (6"});
    CHECK_NOTHROW((void)autodiff::training_graph(inference));  // no offset, nothing to draw by rows
  }

  TEST_CASE("training_graph's batch_offset moves every dropout's mask to the shard's rows, in every precision") {
    Graph inference;
    const float w[] = {0.5f, -1.0f, 2.0f};
    const Tensor step = autodiff::step_counter(inference);
    const Tensor x = inference.mul(inference.input("input", {6, 3}), inference.constant("w", {3}, w));
    const Tensor a = inference.dropout(x, step, {.ratio = 0.3f, .seed = 1});
    const Tensor b = inference.dropout(a, step, {.ratio = 0.2f, .seed = 2, .mask_dims = 1, .batch_offset = 4});
    inference.output("y", b);
    for (const DType precision : {DType::f32, DType::bf16, DType::f16}) {
      CAPTURE(precision);
      const autodiff::TrainingGraph t =
          autodiff::training_graph(inference, {.precision = precision, .batch_offset = 6});
      std::vector<std::int64_t> offsets;
      for (const Node& n : t.graph.nodes())
        if (n.op == OpKind::Dropout) offsets.push_back(std::get<DropoutParams>(n.params).batch_offset);
      CHECK(offsets == std::vector<std::int64_t>{6, 10});
      REQUIRE(t.params.size() == 1);
    }
  }
}

}  // namespace porta
