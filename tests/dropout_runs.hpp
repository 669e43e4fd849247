#pragma once
// What the dropout tests run (test_dropout.cpp, test_stochastic_depth.cpp, test_dropout_shards.cpp).
#include <vector>

#include "porta/porta.hpp"

namespace porta::test {

// y = dropout(x) for x of ones of `shape` in `dtype`, the step a constant.
inline std::vector<float> dropout_of_ones(const Device& device, const Shape& shape, const DropoutParams& p, float step,
                                          DType dtype = DType::f32) {
  Graph g;
  const float s[] = {step};
  const Tensor x = g.input("x", shape, dtype);
  g.output("y", g.dropout(x, g.constant("step", {1}, s), p));
  Executable exe = device.compile(g);
  exe.set_input("x", std::vector<float>(static_cast<std::size_t>(g.desc(x).numel()), 1.0f));
  exe.run();
  return exe.output("y");
}

}  // namespace porta::test
