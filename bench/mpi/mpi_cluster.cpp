// libporta-bench-mpi.so: porta-bench's Cluster on MPI. The only file that calls MPI; porta-bench
// loads it at run time (bench/cluster.cpp), so porta-bench itself never needs libmpi.
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "cluster.hpp"
#include "porta/dtype.hpp"

namespace porta::bench {
namespace {

// MPI has no bf16: a sum of two bf16 values in f32, rounded back once.
void bf16_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = porta::f32_to_bf16(porta::bf16_to_f32(a[i]) + porta::bf16_to_f32(b[i]));
}

std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
}

class MpiCluster final : public Cluster {
 public:
  MpiCluster() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_free(&local);
    MPI_Op_create(bf16_sum, 1, &bf16_sum_);
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    MPI_Get_library_version(version, &length);
    const std::string text(version, static_cast<std::size_t>(length));
    transport_ = "mpi (" + text.substr(0, text.find_first_of(",\n")) + ")";
  }
  ~MpiCluster() override {
    MPI_Op_free(&bf16_sum_);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  std::string transport() const override { return transport_; }
  void set_timeout(double seconds) override { timeout_s_ = seconds; }

  std::vector<std::string> gather(const std::string& text) override {
    int length = static_cast<int>(text.size());
    std::vector<int> lengths(static_cast<std::size_t>(size_));
    MPI_Request request;
    MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
    wait(request, "gather the results");
    std::vector<int> offsets(lengths.size(), 0);
    std::exclusive_scan(lengths.begin(), lengths.end(), offsets.begin(), 0);
    std::string all(rank_ == 0 ? static_cast<std::size_t>(offsets.back() + lengths.back()) : 0, '\0');
    MPI_Igatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                 MPI_COMM_WORLD, &request);
    wait(request, "gather the results");
    std::vector<std::string> parts;
    if (rank_ == 0)
      for (std::size_t r = 0; r < lengths.size(); ++r)
        parts.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
    return parts;
  }

  void broadcast(void* data, std::size_t bytes) override {
    MPI_Request request;
    MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD, &request);
    wait(request, "agree on a value");
  }

  double max(double value) override {
    double out = value;
    MPI_Request request;
    MPI_Iallreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &request);
    wait(request, "agree on a value");
    return out;
  }

  void barrier() override {
    MPI_Request request;
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    wait(request, "meet at a barrier");
  }

  void run(Collective op, CommType type, const void* send, void* recv, std::size_t count) override {
    const MPI_Datatype dt = type == CommType::F32 ? MPI_FLOAT : MPI_UINT16_T;
    const MPI_Op sum = type == CommType::F32 ? MPI_SUM : bf16_sum_;
    const int n = static_cast<int>(count);  // porta-bench comm keeps counts below 2^31
    switch (op) {
      case Collective::AllReduce: MPI_Allreduce(send, recv, n, dt, sum, MPI_COMM_WORLD); break;
      case Collective::AllGather: MPI_Allgather(send, n, dt, recv, n, dt, MPI_COMM_WORLD); break;
      case Collective::ReduceScatter: MPI_Reduce_scatter_block(send, recv, n, dt, sum, MPI_COMM_WORLD); break;
      case Collective::Broadcast:
        if (rank_ == 0 && send != recv) std::memcpy(recv, send, count * (type == CommType::F32 ? 4 : 2));
        MPI_Bcast(recv, n, dt, 0, MPI_COMM_WORLD);
        break;
    }
  }

  int start_allreduce(const float* send, float* recv, std::size_t count) override {
    requests_.emplace_back();
    MPI_Iallreduce(send, recv, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &requests_.back());
    return static_cast<int>(requests_.size() - 1);
  }

  void progress() override {
    for (MPI_Request& request : requests_) {
      int done = 0;
      if (request != MPI_REQUEST_NULL) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    }
  }

  void finish(int handle, const std::string& what) override {
    wait(requests_.at(static_cast<std::size_t>(handle)), what.c_str());  // MPI_REQUEST_NULL once done
    if (++finished_ == requests_.size()) requests_.clear(), finished_ = 0;  // handles start from 0 again
  }

  double reference_allreduce_s(std::size_t count, int iterations) override {
    std::vector<float> send(count, 1.0f), recv(count);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iterations; ++i)
      MPI_Allreduce(send.data(), recv.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double seconds = (MPI_Wtime() - start) / iterations;
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return seconds;
  }

  [[noreturn]] void abort(int code, const std::string& message) override {
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; this keeps the promise if a library's does
  }

 private:
  // Polls rather than blocks, with a pause between tests that leaves the cores to ranks still working.
  void wait(MPI_Request& request, const char* what) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
    for (int done = 0;;) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done) return;
      if (std::chrono::steady_clock::now() > deadline)
        abort(3, "porta-bench: rank " + std::to_string(rank_) + " (" + host_name() +
                     "): error: not every rank came to " + what + " within " +
                     std::to_string(static_cast<long>(timeout_s_)) + " s (--rank-timeout); ending the job");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  int rank_ = 0, size_ = 1, local_rank_ = 0;
  double timeout_s_ = 600.0;
  MPI_Op bf16_sum_ = MPI_OP_NULL;
  std::vector<MPI_Request> requests_;  // start_allreduce's, by handle; MPI_REQUEST_NULL once done
  std::size_t finished_ = 0;           // handles given to finish()
  std::string transport_;
};

}  // namespace
}  // namespace porta::bench

extern "C" porta::bench::Cluster* porta_bench_mpi_open(char* error, std::size_t error_size) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(nullptr, nullptr) != MPI_SUCCESS) {
    std::snprintf(error, error_size, "MPI_Init failed");
    return nullptr;
  }
  return new porta::bench::MpiCluster();
}
