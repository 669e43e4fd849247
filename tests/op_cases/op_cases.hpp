#pragma once
// The registry of op cases shared by the tests and porta-bench: a case that is tested can be
// timed, and a case that is timed is verified the same way.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "porta/porta.hpp"

namespace porta::cases {

struct OpCase {
  std::string name;  // "<op>/<variant>/<dtype>", e.g. "conv2d/grouped_dilated_asym/f16"
  OpKind op;         // the op under test
  DType dtype;
  // Builds the graph; constants (weights) are drawn from `seed`. Inputs are set by the runner.
  std::function<Graph(std::uint64_t seed)> build;
};

// Every case, for every dtype.
std::vector<OpCase> all_cases();

// GEMM and conv problems as porta-bench states them, as graphs with seeded constants.
struct GemmProblem {
  std::int64_t m = 1, n = 1, k = 1, batch = 1;
  bool trans_a = false, trans_b = false;
  DType dtype = DType::f32;
};
// Inputs "a", "b"; output "c". batch == 1 is a Gemm node; batch > 1 a MatMul of [batch, M, K] x
// [batch, K, N] (transposed as asked), since Gemm is 2-D only.
Graph gemm_graph(const GemmProblem& p);
double gemm_flops(const GemmProblem& p);

struct ConvProblem {
  std::int64_t n = 1, c = 1, h = 1, w = 1, k = 1, r = 1, s = 1;
  Conv2dParams params;  // its activation applied in the conv's epilogue
  bool bias = false;     // a constant bias per output channel
  DType dtype = DType::f32;
};
Graph conv_graph(const ConvProblem& p, std::uint64_t seed);  // input "x", constant weights; output "y"
// The same graph with the weights as a second input "w": the shapes checked, no data made.
Graph conv_shape_graph(const ConvProblem& p);
double conv_flops(const ConvProblem& p);

}  // namespace porta::cases
