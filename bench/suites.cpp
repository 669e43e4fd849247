#include "suites.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

namespace porta::bench {
namespace {

Problem gemm(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype) {
  return gemm_problem({.m = m, .n = n, .k = k, .dtype = dtype});
}

// One row of bench/workloads/resnet50_conv.csv at batch 1 (stride and padding are symmetric there).
Problem resnet50_layer(const char* layer, std::int64_t c, std::int64_t hw, std::int64_t k, std::int64_t rs,
                       std::int64_t stride, std::int64_t pad, std::uint64_t seed) {
  cases::ConvProblem p{.n = 1, .c = c, .h = hw, .w = hw, .k = k, .r = rs, .s = rs};
  p.params.stride = {stride, stride};
  p.params.pad = {pad, pad, pad, pad};
  return conv_problem(p, seed, fmt::format("resnet50/{}", layer));
}

// Small enough to run, verified, on every device of a 2-core machine in well under two minutes;
// broad enough to show square/odd GEMM, reduced-precision storage and the three conv shapes of a CNN.
std::vector<Problem> quick(std::uint64_t seed) {
  std::vector<Problem> problems;
  for (std::int64_t size : {256, 512, 1024}) problems.push_back(gemm(size, size, size, DType::f32));
  problems.push_back(gemm(512, 512, 512, DType::bf16));
  problems.push_back(gemm(512, 512, 512, DType::f16));
  problems.push_back(gemm(129, 129, 129, DType::f32));  // not a multiple of any tile: exercises the edges
  problems.push_back(resnet50_layer("conv1", 3, 224, 64, 7, 2, 3, seed));
  problems.push_back(resnet50_layer("res2x_branch2b", 64, 56, 64, 3, 1, 1, seed));
  problems.push_back(resnet50_layer("res3x_branch2c", 128, 28, 512, 1, 1, 0, seed));
  return problems;
}

}  // namespace

std::vector<std::string> suite_names() { return {"quick"}; }

std::vector<Problem> suite_problems(std::string_view name, std::uint64_t seed) {
  if (name == "quick") return quick(seed);
  throw Error(ErrorCode::InvalidArgument, fmt::format("suite '{}' is not available yet (available: {})", name,
                                                      fmt::join(suite_names(), ", ")));
}

}  // namespace porta::bench
