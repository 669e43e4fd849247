#pragma once
// Random valid graphs for whole-graph differential testing (tests/test_random_graphs.cpp, the
// graph_diff fuzz target).
//
// A graph is generated as a Recipe: steps that each name an op, earlier steps as operands and what
// the op is meant to do (filters, window, which constant operand), but no weights and no derived
// shapes. build() makes the weights from each step's seed and lets the builder infer every shape, so
// a recipe stays buildable after the shrinker bypasses steps or shrinks the inputs; where it does
// not, build() says so and the shrinker drops that candidate.
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

#include "porta/graph.hpp"

namespace porta::graph_gen {

// Where the generator's decisions come from: a seed, or a fuzzer's bytes, through one interface so
// that both reach the same graphs.
class Choices {
 public:
  virtual ~Choices() = default;
  virtual std::uint32_t below(std::uint32_t n) = 0;  // in [0, n); n >= 1
  bool percent(std::uint32_t p) { return below(100) < p; }
  template <class T>
  T pick(std::initializer_list<T> options) {
    return options.begin()[below(static_cast<std::uint32_t>(options.size()))];
  }
};

class SeededChoices final : public Choices {
 public:
  explicit SeededChoices(std::uint64_t seed) : state_(seed) {}
  std::uint32_t below(std::uint32_t n) override;

 private:
  std::uint64_t state_;
};

// One byte per choice (more where n needs them); zeros once the bytes run out, so that every input,
// however short, is a graph.
class ByteChoices final : public Choices {
 public:
  explicit ByteChoices(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  std::uint32_t below(std::uint32_t n) override;

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t next_ = 0;
};

// The shape of a constant second operand, relative to the first operand's shape s: {1}, {s[1], 1, 1}
// (one value per NCHW channel), {s.back()}, or s itself.
enum class ConstantShape : std::uint8_t { None, Scalar, PerChannel, LastDim, Full };

struct Step {
  bool input = false;                  // a graph input of `shape` and `dtype`; every other field is unused
  Shape shape;
  DType dtype = DType::f32;
  OpKind op = OpKind::Relu;
  std::vector<std::int32_t> operands;  // earlier steps
  // As the builder takes them: Conv2dParams (with `residual` set, operands[1] is the residual),
  // GemmParams, Pool2dParams, ClipParams, ReshapeParams (0 and -1 entries, resolved against the
  // operand when built), TransposeParams, CastParams...
  OpParams params;
  std::array<std::int64_t, 2> window{1, 1};  // Conv2d: the kernel
  std::int64_t width = 0;                    // Conv2d filters (0: one per input channel), Gemm/MatMul columns
  bool depthwise = false;                    // Conv2d: one group per input channel
  bool bias = false;                         // Conv2d: a constant [K] bias; LayerNorm: a constant bias
  bool weights_as_input = false;             // Conv2d: the weights are a graph input, so no batchnorm folds in
  // Binary ops: the second operand is a constant of this shape (else operands[1]). Gemm: the shape of C.
  // MatMul: None where B is operands[1], else B is a constant.
  ConstantShape constant = ConstantShape::None;
  std::uint64_t seed = 0;              // of the step's constants
  int outputs = 0;                     // graph outputs the step's result is marked as (a tensor may be several)
};

struct Recipe {
  std::vector<Step> steps;
  std::uint64_t input_seed = 0;  // the graph's inputs take cases::set_random_inputs' values for it
};

struct GenerateLimits {
  int max_steps = 24;                  // ops, patterns counted by their ops
  std::int64_t max_elements = 4096;    // of any one tensor
};

Recipe generate(Choices& choices, const GenerateLimits& limits = {});
inline Recipe generate(std::uint64_t seed) {
  SeededChoices choices(seed);
  return generate(choices);
}

struct Built {
  Graph graph;
  std::vector<Tensor> values;  // per step
};
// Inputs are named x0, x1, ... in step order, outputs y0, y1, ... The builder's refusal of a step is
// nullopt: a shrunk recipe that no longer fits together.
std::optional<Built> build(const Recipe& recipe);

// The steps that are ops, not inputs.
std::size_t op_count(const Recipe& recipe);

}  // namespace porta::graph_gen
