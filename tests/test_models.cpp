// The model builders: the networks have torchvision's parameter counts, run on every device and
// match the unoptimised graph on ref, and plan their memory within the documented bound.
#include <doctest/doctest.h>

#include <algorithm>

#include "op_cases/verify.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

// Trainable parameters as torch counts them: batchnorm running statistics are buffers, not parameters,
// and a node's own constants (named "<node>/...", as BERT's mask arithmetic) are none either.
std::int64_t parameters(const Graph& g) {
  std::int64_t total = 0;
  for (const TensorInfo& t : g.tensors())
    if (t.role == Role::Constant && !t.name.ends_with(".bn.mean") && !t.name.ends_with(".bn.var") &&
        t.name.find('/') == std::string::npos)
      total += t.desc.numel();
  return total;
}

// A suite of its own, which the ThreadSanitizer run leaves out (scripts/test): whole networks there
// took minutes each, building and checking on every device the kernels that the op cases run.
TEST_SUITE("networks") {
TEST_CASE("the networks have torchvision's parameter counts") {
  CHECK(parameters(models::resnet50()) == 25'557'032);
  CHECK(parameters(models::efficientnet(0)) == 5'288'548);
  CHECK(parameters(models::efficientnet(3)) == 12'233'232);
  CHECK(parameters(models::mobilenet_v2()) == 3'504'872);
  CHECK(parameters(models::build("efficientnet-b7", {.classes = 10})) == 66'347'960 - 2560 * 990 - 990);
  CHECK(parameters(models::vit_b16()) == 86'567'656);
}

// Hugging Face's BertModel's counts for bert-base-uncased and bert-large-uncased: the embeddings
// (30522 words, 512 positions, 2 segments, LayerNorm), 12 (24) layers and the pooler.
TEST_CASE("BERT has BertModel's parameter count and takes a batch and a sequence length") {
  CHECK(parameters(models::build("bert-large")) == 335'141'888);
  const Graph g = models::build("bert-base", {.batch = 3, .seq = 7});
  CHECK(parameters(g) == 109'482'240);
  for (const Tensor t : g.inputs()) CHECK(g.shape(t) == Shape{3, 7});
  CHECK(g.dtype(g.inputs().at(0)) == DType::i64);
  CHECK(g.shape(g.outputs().at(0).second) == Shape{3, 7, 768});
  CHECK(g.shape(g.outputs().at(1).second) == Shape{3, 768});
  const auto attention = [](const Node& n) { return n.op == OpKind::Attention; };
  CHECK(std::count_if(g.nodes().begin(), g.nodes().end(), attention) == 12);
  check_error([] { models::build("bert-base", {.seq = 513}); }, ErrorCode::InvalidArgument, {"513", "512"});
  check_error([] { models::build("vit-b16", {.resolution = 100}); }, ErrorCode::InvalidArgument, {"16"});
  // Fewer encoder layers: each of BERT-base's holds 7,087,872 parameters.
  const Graph shallow = models::build("bert-base", {.layers = 2});
  CHECK(parameters(shallow) == 109'482'240 - 10 * 7'087'872);
  CHECK(std::count_if(shallow.nodes().begin(), shallow.nodes().end(), attention) == 2);
  const Graph vit = models::build("vit-b16", {.layers = 1});
  CHECK(std::count_if(vit.nodes().begin(), vit.nodes().end(), attention) == 1);
  check_error([] { models::build("vit-b16", {.layers = -1}); }, ErrorCode::InvalidArgument, {"layers -1"});
}

// BERT's outputs for ids, segments and a mask given in that order.
std::vector<std::vector<float>> bert_outputs(Executable& exe, const std::vector<float>& ids,
                                             const std::vector<float>& segments, const std::vector<float>& mask) {
  exe.set_input("input_ids", ids);
  exe.set_input("token_type_ids", segments);
  exe.set_input("attention_mask", mask);
  exe.run();
  return {exe.output("hidden"), exe.output("pooled")};
}

TEST_CASE("BERT's mask hides padding: what a padded token holds changes no other token's output") {
  constexpr std::int64_t seq = 6, hidden = 768;
  // Two layers: padding must not leak through one into the next.
  const Graph g = models::build("bert-base", {.batch = 2, .seq = seq, .layers = 2});
  Executable exe = Device::open("cpu").compile(g);
  std::vector<float> ids{101, 7592, 2088, 102, 0, 0, 101, 2023, 2003, 1037, 3231, 102};
  const std::vector<float> segments{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1};
  const std::vector<float> mask{1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1};
  const auto before = bert_outputs(exe, ids, segments, mask);
  ids[4] = 1999, ids[5] = 4248;  // other padding tokens in the first sequence
  const auto padded = bert_outputs(exe, ids, segments, mask);
  ids[8] = 2001;  // a token of the second sequence
  const auto changed = bert_outputs(exe, ids, segments, mask);
  const auto row = [&](const std::vector<float>& hidden_states, std::int64_t b, std::int64_t tokens) {
    const auto begin = hidden_states.begin() + b * seq * hidden;
    return std::vector<float>(begin, begin + tokens * hidden);
  };
  CHECK(row(padded[0], 0, 4) == row(before[0], 0, 4));  // the unpadded tokens see no padding at all
  CHECK(padded[1] == before[1]);
  CHECK(row(padded[0], 0, seq) != row(before[0], 0, seq));  // the padded positions' own outputs do change
  CHECK(row(changed[0], 1, seq) != row(padded[0], 1, seq));
  CHECK(row(changed[0], 0, seq) == row(padded[0], 0, seq));  // sequences of a batch are independent
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
    for (const auto& named : g.outputs()) {
      const std::string& output = named.first;
      const cases::Comparison c = cases::compare(got.output(output), want.output(output));
      CHECK_MESSAGE(c.nmse < 1e-8, name << " on " << d.spec << ", " << output << ": nmse " << c.nmse);
      CHECK(c.non_finite == 0);
    }
  }
}

TEST_CASE("resnet50, efficientnet-b0 and mobilenet-v2 run on every device and match ref") {
  check_model("resnet50", {.batch = 1, .resolution = 64, .classes = 10});
  check_model("efficientnet-b0", {.batch = 2, .resolution = 64, .classes = 10});
  check_model("mobilenet-v2", {.batch = 2, .resolution = 64, .classes = 10});
}

// Two encoder layers hold every op of the twelve (the parameter counts above check the depth).
TEST_CASE("bert-base and vit-b16 run on every device and match ref") {
  check_model("bert-base", {.batch = 2, .seq = 5, .layers = 2});
  check_model("vit-b16", {.batch = 2, .resolution = 32, .classes = 10, .layers = 2});
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

}  // TEST_SUITE("networks")

}  // namespace
}  // namespace porta::test
