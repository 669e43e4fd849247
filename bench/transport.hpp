#pragma once
// What porta-bench comm runs its collectives over: MPI on host buffers, or NCCL on the CUDA device
// of each rank's node-local rank, bootstrapped over MPI.
#include <cstddef>
#include <memory>
#include <string>

#include "cluster.hpp"

namespace porta::bench {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::string name() const = 0;     // "mpi", "nccl"
  virtual std::string library() const = 0;  // its version
  virtual std::string buffers() const = 0;  // where the buffers live: "host", "cuda:1"
  // A buffer the collectives take, and blocking copies between it and host memory.
  virtual std::shared_ptr<void> allocate(std::size_t bytes) = 0;
  virtual void upload(void* buffer, const void* host, std::size_t bytes) = 0;
  virtual void download(void* host, const void* buffer, std::size_t bytes) = 0;
  // As Cluster::run; where the transport only enqueues it, finish() waits for what was enqueued.
  virtual void run(Collective op, CommType type, const void* send, void* recv, std::size_t count) = 0;
  virtual void finish() = 0;
};

std::unique_ptr<Transport> mpi_transport(Cluster& job);
// Throws porta::Error Unsupported where this build has no nccl.h, or libcuda/libnccl will not load.
std::unique_ptr<Transport> nccl_transport(Cluster& job);

}  // namespace porta::bench
