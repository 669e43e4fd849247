#include "cluster.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/core.h>

#include "bench_module.hpp"
#include "porta/error.hpp"

#ifndef PORTA_BENCH_MPI
#define PORTA_BENCH_MPI 0
#endif

namespace porta::bench {
namespace {

// A job of one process: every collective is a copy.
class SingleProcess final : public Cluster {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  std::string transport() const override { return "none"; }
  void set_timeout(double) override {}
  std::vector<std::string> gather(const std::string& text) override { return {text}; }
  void broadcast(void*, std::size_t) override {}
  double max(double value) override { return value; }
  void barrier() override {}
  void run(Collective, CommType type, const void* send, void* recv, std::size_t count) override {
    if (send != recv) std::memcpy(recv, send, count * (type == CommType::F32 ? 4 : 2));
  }
  int start_allreduce(const float* send, float* recv, std::size_t count) override {
    run(Collective::AllReduce, CommType::F32, send, recv, count);
    return 0;
  }
  void progress() override {}
  void finish(int, const std::string&) override {}
  double reference_allreduce_s(std::size_t, int) override {
    throw Error(ErrorCode::Unsupported, "a job of one process has no MPI_Allreduce to time");
  }
  [[noreturn]] void abort(int code, const std::string& message) override {
    fmt::print(stderr, "{}\n", message);
    std::exit(code);
  }
};

std::unique_ptr<Cluster> open_mpi() {
  if (!PORTA_BENCH_MPI)
    throw Error(ErrorCode::Unsupported, "this porta-bench was built without MPI (CMake's FindMPI found none)");
  // Global: Open MPI's own plugins resolve libmpi's symbols from the global scope.
  using Open = Cluster* (*)(char*, std::size_t);
  const auto open = reinterpret_cast<Open>(module_entry("mpi", "porta_bench_mpi_open", ModuleSymbols::Global));
  char error[512] = {};
  if (Cluster* job = open(error, sizeof error)) return std::unique_ptr<Cluster>(job);
  throw Error(ErrorCode::Unsupported, fmt::format("MPI did not start: {}", error));
}

std::unique_ptr<Cluster>& job() {
  static std::unique_ptr<Cluster> the_job;
  return the_job;
}

}  // namespace

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"})
    if (std::getenv(name)) return true;
  return false;
}

Cluster& cluster(bool need_mpi) {
  std::unique_ptr<Cluster>& the_job = job();
  if (the_job && (the_job->transport() != "none" || !need_mpi)) return *the_job;
  the_job = need_mpi || launched_by_mpi() ? open_mpi() : std::make_unique<SingleProcess>();
  return *the_job;
}

Cluster* open_job() {
  const std::unique_ptr<Cluster>& the_job = job();
  return the_job && the_job->size() > 1 ? the_job.get() : nullptr;
}

std::string local_device_spec(const std::string& spec, int local_rank) {
  const std::string suffix = ":local";
  if (spec.size() <= suffix.size() || spec.compare(spec.size() - suffix.size(), suffix.size(), suffix) != 0)
    return spec;
  const std::string backend = spec.substr(0, spec.size() - suffix.size());
  return backend == "cpu" ? backend : fmt::format("{}:{}", backend, local_rank);
}

}  // namespace porta::bench
