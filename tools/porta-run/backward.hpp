#pragma once
// porta-run --backward: appends to a model's graph the gradient of sum(output * seed), summed over its
// float outputs, with respect to every float input and initializer, each a new output "NAME.grad".
// Integer and bool tensors have no gradient (autodiff::gradients): they are skipped and listed.
#include <string>
#include <string_view>
#include <vector>

#include "porta/graph.hpp"

namespace porta::cli {

// The input that holds an output's seed: a name no ONNX tensor has.
inline constexpr std::string_view seed_prefix = "porta-run.seed/";
inline std::string seed_name(const std::string& output) { return std::string(seed_prefix) + output; }

// An integer or bool input, initializer or output, which has no gradient.
struct Skipped {
  std::string name;
  DType dtype;
  bool output;
};

struct Backward {
  std::vector<std::string> seeded;  // the outputs with a seed, an input named seed_name(output)
  std::vector<Skipped> skipped;
};

// Throws InvalidArgument where the model has no float output.
Backward append_backward(Graph& graph);

}  // namespace porta::cli
