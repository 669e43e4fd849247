#include "suites.hpp"

#include <set>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "backward.hpp"
#include "peak.hpp"
#include "train.hpp"
#include "workload_csv.hpp"

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

// Each entry once per dtype (a file's own dtype column, when it has one, is kept as written).
std::vector<WorkloadEntry> in_dtypes(const std::vector<WorkloadEntry>& entries, const std::vector<DType>& dtypes,
                                     bool keep_own) {
  std::vector<WorkloadEntry> out;
  for (const DType dtype : dtypes)
    for (WorkloadEntry e : entries) {
      std::visit([&](auto& p) { p.dtype = keep_own && p.dtype != DType::f32 ? p.dtype : dtype; }, e.problem);
      out.push_back(std::move(e));
    }
  return out;
}

std::vector<WorkloadEntry> only_sets(const std::vector<WorkloadEntry>& entries, std::set<std::string> sets) {
  std::vector<WorkloadEntry> out;
  for (const WorkloadEntry& e : entries)
    if (sets.count(e.label)) out.push_back(e);
  return out;
}

void append(std::vector<Problem>& to, std::vector<Problem> from) {
  for (Problem& p : from) to.push_back(std::move(p));
}

// Powers of two from 128 to 8192 and their odd neighbours: the gap between 2^k and 2^k+1 shows
// how much a kernel depends on sizes that divide its tiles. Then DeepBench's GEMMs and BERT's.
std::vector<Problem> gemm_suite(const std::vector<DType>& dtypes, std::uint64_t seed) {
  std::vector<Problem> problems;
  for (const DType dtype : dtypes)
    for (std::int64_t size = 128; size <= 8192; size *= 2)
      for (const std::int64_t s : {size, size + 1}) problems.push_back(gemm(s, s, s, dtype));
  const auto deepbench = builtin_workload("deepbench_gemm");
  append(problems, workload_problems(in_dtypes(only_sets(deepbench, {"training_set"}), dtypes, false), seed,
                                     "workloads/deepbench_gemm.csv", std::nullopt, "deepbench/"));
  append(problems, workload_problems(in_dtypes(only_sets(deepbench, {"inference_server_set", "inference_device_set"}),
                                               dtypes, false),
                                     seed, "workloads/deepbench_gemm.csv", std::nullopt, "deepbench/"));
  append(problems, workload_problems(in_dtypes(builtin_workload("bert_gemm"), dtypes, false), seed,
                                     "workloads/bert_gemm.csv", std::nullopt, "bert/"));
  return problems;
}

std::vector<Problem> conv_suite(const std::vector<DType>& dtypes, std::uint64_t seed) {
  std::vector<Problem> problems;
  const auto resnet = in_dtypes(builtin_workload("resnet50_conv"), dtypes, false);
  for (const std::int64_t n : {1, 32, 256})
    append(problems, workload_problems(resnet, seed, "workloads/resnet50_conv.csv", n, "resnet50/"));
  const auto depthwise = in_dtypes(builtin_workload("efficientnet_b0_depthwise"), dtypes, false);
  for (const std::int64_t n : {1, 32})
    append(problems,
           workload_problems(depthwise, seed, "workloads/efficientnet_b0_depthwise.csv", n, "efficientnet-b0/"));
  append(problems, workload_problems(in_dtypes(only_sets(builtin_workload("deepbench_conv"), {"training_set"}),
                                               dtypes, false),
                                     seed, "workloads/deepbench_conv.csv", std::nullopt, "deepbench/"));
  return problems;
}

// What the GPU kernels are judged by, native and vendor side by side (scripts/gpu-check): GEMMs
// large enough to fill an H100 in bf16 and f16 (f32 as well, exact, or tf32 with --allow-tf32),
// ResNet-50's 3x3 layers at a training-sized batch, and elementwise kernels over arrays far larger
// than L2, whose ceiling is the device's own copy (copy_probe_row, measured with the ceilings).
std::vector<Problem> gpu_suite(std::uint64_t seed) {
  std::vector<Problem> problems = peak_problems(true, {});  // the stream kernels and the launch probe: quick, first
  for (const DType dtype : {DType::bf16, DType::f16})
    for (const std::int64_t size : {4096, 8192}) problems.push_back(gemm(size, size, size, dtype));
  problems.push_back(gemm(4096, 4096, 4096, DType::f32));
  std::vector<WorkloadEntry> three_by_three;
  for (const WorkloadEntry& e : builtin_workload("resnet50_conv"))
    if (std::get<cases::ConvProblem>(e.problem).r == 3) three_by_three.push_back(e);
  append(problems, workload_problems(three_by_three, seed, "workloads/resnet50_conv.csv", 32, "resnet50/"));
  return problems;
}

// A list may name the same problem twice (DeepBench does): time it once.
std::vector<Problem> without_repeats(std::vector<Problem> problems) {
  std::set<std::string> seen;
  std::vector<Problem> out;
  for (Problem& p : problems)
    if (seen.insert(fmt::format("{}|{}|{}|{}", p.op, p.workload, to_string(p.dtype), p.params.dump())).second)
      out.push_back(std::move(p));
  return out;
}

std::vector<DType> distinct_dtypes(const std::vector<Problem>& problems) {
  std::vector<DType> dtypes;
  for (const Problem& p : problems)
    if (std::find(dtypes.begin(), dtypes.end(), p.dtype) == dtypes.end()) dtypes.push_back(p.dtype);
  return dtypes;
}

}  // namespace

std::vector<std::string> suite_names() {
  return {"quick", "peak", "gemm", "conv", "backward", "models", "gpu", "train"};
}

Suite make_suite(const SuiteRequest& request, std::uint64_t seed) {
  const std::vector<DType> dtypes = request.dtypes.empty() ? std::vector{DType::f32} : request.dtypes;
  Suite suite{.name = request.workload_file.empty() ? request.name : "workload"};
  if (!request.workload_file.empty()) {
    const auto entries = in_dtypes(read_workload_file(request.workload_file), dtypes, request.dtypes.empty());
    std::vector<std::optional<std::int64_t>> batches(request.conv_batches.begin(), request.conv_batches.end());
    if (batches.empty()) batches.emplace_back();
    for (const auto n : batches)
      for (const Layout layout : request.conv_layouts.empty() ? std::vector{Layout::NCHW} : request.conv_layouts)
        append(suite.problems, workload_problems(entries, seed, request.workload_file, n, {}, layout));
  } else if (request.name == "quick") {
    suite.problems = quick(seed);
  } else if (request.name == "peak") {
    suite.problems = peak_problems(true, request.dtypes.empty() ? std::vector{DType::f32, DType::f16, DType::bf16}
                                                                 : request.dtypes);
    suite.is_peak = true;
  } else if (request.name == "gemm") {
    suite.problems = gemm_suite(dtypes, seed);
  } else if (request.name == "conv") {
    suite.problems = conv_suite(dtypes, seed);
  } else if (request.name == "backward") {
    suite.problems = backward_problems();
  } else if (request.name == "models") {
    suite.problems = model_problems(seed);
    suite.references = true;
  } else if (request.name == "gpu") {
    suite.problems = gpu_suite(seed);
  } else if (request.name == "train") {
    suite.problems = train_problems(seed);
    suite.training = true;
  } else {
    throw Error(ErrorCode::InvalidArgument,
                fmt::format("no suite '{}' (available: {})", request.name, fmt::join(suite_names(), ", ")));
  }
  suite.problems = without_repeats(std::move(suite.problems));
  suite.dtypes = distinct_dtypes(suite.problems);
  return suite;
}

}  // namespace porta::bench
