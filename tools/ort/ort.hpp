#pragma once
// ONNX Runtime beside porta: its CPU provider (onnxruntime-node, run by node in a child process)
// on a .onnx file, timed as porta-bench times porta, its outputs and optionally its own per-node
// profile brought back. Used by porta-bench (model rows) and porta-run (--compare ort).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "node_times.hpp"

namespace porta::ort {

struct Input {
  std::string name;
  Shape shape;
  std::vector<float> values;
  DType dtype = DType::f32;  // the model input's: f32, i64, i32 or bool (the values are converted)
};

struct Options {
  int threads = 1;  // intraOpNumThreads
  double warmup_s = 0.1;
  int min_samples = 10;
  double min_time_s = 0.5, max_time_s = 10.0;
  int profile_runs = 0;  // > 0: also run this many times under ORT's profiler (the first is left out)
};

struct Output {
  std::string name;
  Shape shape;
  std::vector<float> values;
};

struct Result {
  std::string error;  // set when ORT could not run, and why (not installed, node missing, a model it refuses)
  std::string version;
  int samples = 0;
  double median_s = 0.0, min_s = 0.0, p90_s = 0.0, first_run_s = 0.0;
  std::vector<Output> outputs;  // float32 outputs in the model's order
  std::vector<NodeTime> profile;  // ORT's optimised graph: a fused node keeps one of its sources' names
};

// Where onnxruntime-node is installed: $PORTA_ORT, else ~/.cache/porta/onnxruntime-node (scripts/setup).
std::filesystem::path install_dir();

// Runs `model` with `inputs` (float32) under ORT. Never throws for ORT's own trouble: `error` says it.
Result run(const std::filesystem::path& model, const std::vector<Input>& inputs, const Options& options);

// Runs a shell command and returns its standard output.
std::string capture_output(const std::string& command);

}  // namespace porta::ort
