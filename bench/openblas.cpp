#include "openblas.hpp"

#include <map>
#include <string>
#include <vector>

#if PORTA_BENCH_OPENBLAS
#include <cblas.h>
#endif

namespace porta::bench {
namespace {

// Why OpenBLAS cannot run `problem` on `target`, or empty.
std::string unsupported_reason(const Problem& problem, const Target& target) {
  if (!PORTA_BENCH_OPENBLAS) return "this porta-bench was built without OpenBLAS (Debian: libopenblas-dev)";
  if (target.backend != "cpu") return "OpenBLAS runs on the host: it stands beside cpu devices only";
  if (problem.op != "gemm") return "OpenBLAS is a GEMM reference; " + problem.op + " is not a GEMM";
  if (problem.dtype != DType::f32) return "OpenBLAS's reference here is sgemm: f32 only";
  return {};
}

}  // namespace

Row run_openblas(const Problem& problem, const Target& target, const RunSettings& settings) {
  Row row = row_for(problem, target, settings);
  if (const std::string why = unsupported_reason(problem, target); !why.empty()) {
    row.status = "unsupported";
    row.reason = why;
    return row;
  }
  if (!target.device) {
    row.status = "failed";
    row.reason = target.error;
    return row;
  }
#if PORTA_BENCH_OPENBLAS
  const auto& p = problem.params;
  const int m = p["m"], n = p["n"], k = p["k"], batch = p["batch"];
  const bool trans_a = p["trans_a"], trans_b = p["trans_b"];
  // The values cases::set_random_inputs gives porta's run of the same graph: input i gets seed + i.
  std::map<std::string, std::vector<float>> values;
  std::uint64_t seed = settings.seed;
  for (const Tensor t : problem.graph.inputs()) {
    const TensorInfo& info = problem.graph.info(t);
    values[info.name] = cases::random_values(static_cast<std::size_t>(info.desc.numel()), seed++);
  }
  const std::vector<float>& a = values.at("a");
  const std::vector<float>& b = values.at("b");
  std::vector<float> c(static_cast<std::size_t>(batch) * m * n);
  const auto run = [&] {
    for (int i = 0; i < batch; ++i)
      cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                  1.0f, a.data() + std::size_t(i) * m * k, trans_a ? m : k, b.data() + std::size_t(i) * k * n,
                  trans_b ? k : n, 0.0f, c.data() + std::size_t(i) * m * n, n);
  };
  openblas_set_num_threads(target.device->info().threads);
  const double first = steady_seconds();
  run();
  row.first_run_s = steady_seconds() - first;
  record_timing(row, measure([&] {
                  run();
                  return std::optional<double>{};
                }, settings.timing),
                problem);
  if (!settings.verify) return row;
  if (!settings.no_verify_reason.empty()) {
    row.reason = "not verified: " + settings.no_verify_reason;
    return row;
  }
  Executable want = Device::open("ref").compile(problem.graph);
  cases::set_random_inputs(want, problem.graph, settings.seed);
  want.run();
  cases::Verification v{.passed = true};
  const auto& [name, out] = problem.graph.outputs().front();
  cases::check_output(v, name, problem.graph.shape(out), DType::f32, problem.kind, false, c, want.output(name));
  record_verification(row, v);
#endif
  return row;
}

}  // namespace porta::bench
