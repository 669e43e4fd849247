// The `models` suite: every network of porta::models at batch 1 in f32, as problems the suite
// runner sizes, times, verifies (where the reference is fast enough) and reports like any other,
// with PyTorch eager and ONNX Runtime beside each cpu target. `porta-bench model` is the command
// for chosen networks and batches.
#include "models.hpp"
#include "porta/models.hpp"
#include "suites.hpp"

namespace porta::bench {

std::vector<Problem> model_problems(std::uint64_t seed) {
  std::vector<Problem> problems;
  for (const models::ModelInfo& m : models::available()) problems.push_back(model_problem(m.name, 1, DType::f32, seed));
  return problems;
}

}  // namespace porta::bench
