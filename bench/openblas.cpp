#include "openblas.hpp"

#include <dlfcn.h>

#include <map>
#include <string>
#include <vector>

#if PORTA_BENCH_OPENBLAS
#include <cblas.h>
#endif

namespace porta::bench {
namespace {

#if PORTA_BENCH_OPENBLAS
// OpenBLAS, loaded on first use rather than linked, so that porta-bench starts where it is missing
// (like porta's vendor modules); `failure` says why it did not load.
struct OpenBlas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&openblas_set_num_threads) set_num_threads = nullptr;
  std::string failure;
};

const OpenBlas& openblas() {
  static const OpenBlas library = [] {
    OpenBlas l;
    void* handle = nullptr;
    for (const char* name : {"libopenblas.so.0", "libopenblas.so"})
      if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!handle) {
      const char* why = dlerror();
      l.failure = std::string("OpenBLAS did not load: ") + (why ? why : "dlopen failed");
      return l;
    }
    l.sgemm = reinterpret_cast<decltype(&cblas_sgemm)>(dlsym(handle, "cblas_sgemm"));
    l.set_num_threads =
        reinterpret_cast<decltype(&openblas_set_num_threads)>(dlsym(handle, "openblas_set_num_threads"));
    if (!l.sgemm || !l.set_num_threads)
      l.failure = "the OpenBLAS loaded has no cblas_sgemm or openblas_set_num_threads";
    return l;
  }();
  return library;
}
#endif

// Why OpenBLAS cannot run `problem` on `target`, or empty.
std::string unsupported_reason(const Problem& problem, const Target& target) {
  if (target.backend != "cpu") return "OpenBLAS runs on the host: it stands beside cpu devices only";
  if (problem.op != "gemm") return "OpenBLAS is a GEMM reference; " + problem.op + " is not a GEMM";
  if (problem.dtype != DType::f32) return "OpenBLAS's reference here is sgemm: f32 only";
#if PORTA_BENCH_OPENBLAS
  return openblas().failure;
#else
  return "this porta-bench was built without OpenBLAS's header (Debian: libopenblas-dev)";
#endif
}

}  // namespace

Prepared prepare_openblas(const Problem& problem, const Target& target, const RunSettings& settings) {
  Prepared p = outside_run(problem, target, settings, unsupported_reason(problem, target));
  if (p.row.status != "ok") return p;
#if PORTA_BENCH_OPENBLAS
  const auto& params = problem.params;
  struct Operands {
    int m, n, k, batch;
    bool trans_a, trans_b;
    std::vector<float> a, b, c;
  };
  auto gemm = std::make_shared<Operands>(Operands{.m = params["m"], .n = params["n"], .k = params["k"],
                                                  .batch = params["batch"], .trans_a = params["trans_a"],
                                                  .trans_b = params["trans_b"]});
  // The values cases::set_random_inputs gives porta's run of the same graph: input i gets seed + i.
  std::map<std::string, std::vector<float>> values;
  std::uint64_t seed = settings.seed;
  for (const Tensor t : problem.graph.inputs()) {
    const TensorInfo& info = problem.graph.info(t);
    values[info.name] = cases::random_values(static_cast<std::size_t>(info.desc.numel()), seed++);
  }
  gemm->a = std::move(values.at("a"));
  gemm->b = std::move(values.at("b"));
  gemm->c.resize(static_cast<std::size_t>(gemm->batch) * gemm->m * gemm->n);
  const auto run = [gemm, sgemm = openblas().sgemm] {
    const Operands& g = *gemm;
    for (int i = 0; i < g.batch; ++i)
      sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans, g.m,
                  g.n, g.k, 1.0f, g.a.data() + std::size_t(i) * g.m * g.k, g.trans_a ? g.m : g.k,
                  g.b.data() + std::size_t(i) * g.k * g.n, g.trans_b ? g.k : g.n, 0.0f,
                  gemm->c.data() + std::size_t(i) * g.m * g.n, g.n);
    return std::optional<double>{};
  };
  openblas().set_num_threads(target.device->info().threads);
  const double first = steady_seconds();
  run();
  p.row.first_run_s = steady_seconds() - first;
  p.sample = run;
  p.verify = [&problem, gemm, settings](Row& row) { verify_host_output(row, problem, gemm->c, settings); };
#endif
  return p;
}

}  // namespace porta::bench
