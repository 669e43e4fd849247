#pragma once
// Named sets of problems: `porta-bench run --suite NAME` (or `--workload FILE`).
#include <string>
#include <string_view>
#include <vector>

#include "problems.hpp"

namespace porta::bench {

struct SuiteRequest {
  std::string name = "quick";
  std::string workload_file;  // when set, the suite is this file's problems ("workload")
  std::vector<DType> dtypes;  // for gemm, conv and workload files; empty: f32 (a file's own dtype column wins)
  // A workload file's convs at each of these batches (empty: the file's own) and layouts (empty: NCHW).
  std::vector<std::int64_t> conv_batches;
  std::vector<Layout> conv_layouts;
};

struct Suite {
  std::string name;
  std::vector<Problem> problems;
  bool is_peak = false;         // its rows are the ceilings' probes
  bool references = false;      // PyTorch eager and ONNX Runtime beside each cpu target (the models suite)
  bool training = false;        // its problems are trained by epoch (train.hpp), not timed run by run
  std::vector<DType> dtypes;    // the dtypes whose compute ceilings its rows need
};

std::vector<std::string> suite_names();  // every suite that exists, for help text and errors

// Throws porta::Error(InvalidArgument) for a suite that does not exist, and for a workload file
// that is malformed (with its line).
Suite make_suite(const SuiteRequest& request, std::uint64_t seed);

// The `models` suite's networks (suite_models.cpp).
std::vector<Problem> model_problems(std::uint64_t seed);

}  // namespace porta::bench
