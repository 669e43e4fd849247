// The model builders: the networks have torchvision's parameter counts, run on every device and
// match the unoptimised graph on ref, and plan their memory within the documented bound.
#include <doctest/doctest.h>

#include <algorithm>

#include "op_cases/verify.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

// Trainable parameters as torch counts them: batchnorm running statistics are buffers, not parameters.
std::int64_t parameters(const Graph& g) {
  std::int64_t total = 0;
  for (const TensorInfo& t : g.tensors())
    if (t.role == Role::Constant && !t.name.ends_with(".bn.mean") && !t.name.ends_with(".bn.var")) total += t.desc.numel();
  return total;
}

TEST_CASE("the networks have torchvision's parameter counts") {
  CHECK(parameters(models::resnet50()) == 25'557'032);
  CHECK(parameters(models::efficientnet(0)) == 5'288'548);
  CHECK(parameters(models::efficientnet(3)) == 12'233'232);
  CHECK(parameters(models::mobilenet_v2()) == 3'504'872);
  CHECK(parameters(models::build("efficientnet-b7", {.classes = 10})) == 66'347'960 - 2560 * 990 - 990);
  CHECK(parameters(models::vit_b16()) == 86'567'656);
}

// The encoder's: 12 (24) layers of Q, K, V, output, two feed-forward linears and two LayerNorms, and
// the embeddings' LayerNorm; the token, position and segment tables and the pooler are not built.
TEST_CASE("BERT has the encoder's parameter count and takes a batch and a sequence length") {
  const auto encoder = [](std::int64_t layers, std::int64_t h) {
    return layers * (4 * (h * h + h) + 2 * 4 * h * h + 4 * h + h + 4 * h) + 2 * h;
  };
  CHECK(parameters(models::build("bert-base")) == encoder(12, 768));
  CHECK(parameters(models::build("bert-large")) == encoder(24, 1024));
  const Graph g = models::build("bert-base", {.batch = 3, .seq = 7});
  CHECK(g.shape(g.inputs().at(0)) == Shape{3, 7, 768});
  CHECK(g.shape(g.outputs().at(0).second) == Shape{3, 7, 768});
  const auto attention = [](const Node& n) { return n.op == OpKind::Attention; };
  CHECK(std::count_if(g.nodes().begin(), g.nodes().end(), attention) == 12);
  check_error([] { models::build("vit-b16", {.resolution = 100}); }, ErrorCode::InvalidArgument, {"16"});
}

TEST_CASE("models take their native resolution, a batch and a class count") {
  const Graph g = models::build("efficientnet-b3", {.batch = 2, .classes = 7});
  CHECK(g.shape(g.inputs().at(0)) == Shape{2, 3, 300, 300});
  CHECK(g.shape(g.outputs().at(0).second) == Shape{2, 7});
  CHECK(models::available().size() == 13);
  check_error([] { models::build("resnet18"); }, ErrorCode::NotFound, {"resnet18", "resnet50", "efficientnet-b7"});
  check_error([] { models::efficientnet(8); }, ErrorCode::InvalidArgument, {"8"});
}

// The optimised graph (folded, fused, in place) on each device against the plain graph on ref.
void check_model(const std::string& name, const models::ModelOptions& options) {
  const Graph g = models::build(name, options);
  Executable want = Device::open("ref").compile(g, {.optimize = false});
  cases::set_random_inputs(want, g, 5);
  want.run();
  for (const DeviceInfo& d : devices()) {
    Executable got = Device::open(d.spec).compile(g, {.poison_memory = true});
    cases::set_random_inputs(got, g, 5);
    got.run();
    const std::string& output = g.outputs().at(0).first;
    const cases::Comparison c = cases::compare(got.output(output), want.output(output));
    CHECK_MESSAGE(c.nmse < 1e-8, name << " on " << d.spec << ": nmse " << c.nmse);
    CHECK(c.non_finite == 0);
  }
}

TEST_CASE("resnet50, efficientnet-b0 and mobilenet-v2 run on every device and match ref") {
  check_model("resnet50", {.batch = 1, .resolution = 64, .classes = 10});
  check_model("efficientnet-b0", {.batch = 2, .resolution = 64, .classes = 10});
  check_model("mobilenet-v2", {.batch = 2, .resolution = 64, .classes = 10});
}

TEST_CASE("bert-base and vit-b16 run on every device and match ref") {
  check_model("bert-base", {.batch = 2, .seq = 5});
  check_model("vit-b16", {.batch = 2, .resolution = 32, .classes = 10});
}

TEST_CASE("efficientnet-b0's planned memory stays within twice its largest activation plus its weights") {
  const Graph g = models::efficientnet(0);
  std::uint64_t largest = 0;
  for (const TensorInfo& t : g.tensors())
    if (t.role != Role::Constant) largest = std::max(largest, t.desc.bytes());
  const MemoryEstimate e = Device::open("cpu").estimate_memory(g);
  MESSAGE("efficientnet-b0 batch 1: arena " << e.arena_bytes << " B, largest activation " << largest
                                            << " B, weights " << e.constant_bytes << " B, naive arena "
                                            << e.naive_arena_bytes << " B");
  CHECK(e.arena_bytes <= 2 * largest);
  CHECK(e.arena_bytes < e.naive_arena_bytes);
}

}  // namespace
}  // namespace porta::test
