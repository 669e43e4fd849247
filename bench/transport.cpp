#include "transport.hpp"

#include <cstdlib>
#include <cstring>

#include "porta/error.hpp"

#ifndef PORTA_BENCH_NCCL
#define PORTA_BENCH_NCCL 0
#endif

namespace porta::bench {
namespace {

// The job's MPI on host buffers: copies are memcpy, and a collective is done when its call returns.
class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(Cluster& job) : job_(job) {}
  std::string name() const override { return "mpi"; }
  std::string library() const override { return job_.transport(); }
  std::string buffers() const override { return "host"; }
  std::shared_ptr<void> allocate(std::size_t bytes) override { return {std::malloc(bytes ? bytes : 1), std::free}; }
  void upload(void* buffer, const void* host, std::size_t bytes) override { std::memcpy(buffer, host, bytes); }
  void download(void* host, const void* buffer, std::size_t bytes) override { std::memcpy(host, buffer, bytes); }
  void run(Collective op, CommType type, const void* send, void* recv, std::size_t count) override {
    job_.run(op, type, send, recv, count);
  }
  void finish() override {}

 private:
  Cluster& job_;
};

}  // namespace

std::unique_ptr<Transport> mpi_transport(Cluster& job) { return std::make_unique<MpiTransport>(job); }

#if !PORTA_BENCH_NCCL
std::unique_ptr<Transport> nccl_transport(Cluster&) {
  throw Error(ErrorCode::Unsupported, "this porta-bench was built without NCCL (CMake found no nccl.h and cuda.h)");
}
#endif

}  // namespace porta::bench
