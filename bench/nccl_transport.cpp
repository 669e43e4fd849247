// porta-bench comm over NCCL on CUDA device buffers: libnccl.so.2 and the CUDA driver are loaded at
// run time (nccl.h and cuda.h give the types), so porta-bench needs neither to start. Each rank
// takes cuda:<its node-local rank>; rank 0's ncclUniqueId reaches the others over the job's MPI.
#include <nccl.h>

#include <fmt/core.h>

#include "cuda_memory.hpp"
#include "runtime_library.hpp"
#include "transport.hpp"

namespace porta::bench {
namespace {

#define PORTA_NCCL(f) decltype(&::f) f = library.get<decltype(&::f)>(#f)

struct Nccl {
  RuntimeLibrary library{"libnccl.so.2", "NCCL (libnccl.so.2)"};
  PORTA_NCCL(ncclGetVersion);
  PORTA_NCCL(ncclGetErrorString);
  PORTA_NCCL(ncclGetUniqueId);
  PORTA_NCCL(ncclCommInitRank);
  PORTA_NCCL(ncclCommDestroy);
  PORTA_NCCL(ncclAllReduce);
  PORTA_NCCL(ncclAllGather);
  PORTA_NCCL(ncclReduceScatter);
  PORTA_NCCL(ncclBroadcast);
};

#undef PORTA_NCCL

class NcclTransport final : public Transport {
 public:
  explicit NcclTransport(Cluster& job) : device_(open_cuda_memory(job.local_rank())) {
    ncclUniqueId id{};
    if (job.rank() == 0) check(nccl_.ncclGetUniqueId(&id), "ncclGetUniqueId");
    job.broadcast(&id, sizeof id);
    device_->make_current();
    check(nccl_.ncclCommInitRank(&comm_, job.size(), id, job.rank()), "ncclCommInitRank");
  }
  ~NcclTransport() override { nccl_.ncclCommDestroy(comm_); }

  std::string name() const override { return "nccl"; }
  std::string library() const override {
    int version = 0;
    nccl_.ncclGetVersion(&version);
    return fmt::format("NCCL {}.{}.{}", version / 10000, version / 100 % 100, version % 100);
  }
  std::string buffers() const override { return device_->spec(); }
  std::shared_ptr<void> allocate(std::size_t bytes) override {
    return {device_->allocate(bytes), [device = device_](void* p) { device->release(p); }};
  }
  void upload(void* buffer, const void* host, std::size_t bytes) override { device_->upload(buffer, host, bytes); }
  void download(void* host, const void* buffer, std::size_t bytes) override { device_->download(host, buffer, bytes); }

  void run(Collective op, CommType type, const void* send, void* recv, std::size_t count) override {
    const ncclDataType_t dt = type == CommType::F32 ? ncclFloat32 : ncclBfloat16;
    cudaStream_t stream = nullptr;  // the legacy default stream of the primary context
    switch (op) {
      case Collective::AllReduce:
        return check(nccl_.ncclAllReduce(send, recv, count, dt, ncclSum, comm_, stream), "ncclAllReduce");
      case Collective::AllGather:
        return check(nccl_.ncclAllGather(send, recv, count, dt, comm_, stream), "ncclAllGather");
      case Collective::ReduceScatter:
        return check(nccl_.ncclReduceScatter(send, recv, count, dt, ncclSum, comm_, stream), "ncclReduceScatter");
      case Collective::Broadcast:
        return check(nccl_.ncclBroadcast(send, recv, count, dt, 0, comm_, stream), "ncclBroadcast");
    }
  }
  void finish() override { device_->synchronize(); }

 private:
  void check(ncclResult_t result, const char* what) const {
    if (result != ncclSuccess)
      throw Error(ErrorCode::DeviceUnavailable, fmt::format("{}: {} failed: {}", device_->spec(), what,
                                                            nccl_.ncclGetErrorString(result)));
  }

  Nccl nccl_;
  std::shared_ptr<CudaDevice> device_;
  ncclComm_t comm_ = nullptr;
};

}  // namespace

std::unique_ptr<Transport> nccl_transport(Cluster& job) { return std::make_unique<NcclTransport>(job); }

}  // namespace porta::bench
