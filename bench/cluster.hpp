#pragma once
// porta-bench across processes: the MPI job it was launched in (mpirun, srun), or a job of one.
//
// porta-bench never links MPI. Where CMake found it, the MPI calls live in a module,
// lib/porta/libporta-bench-mpi.so (bench/mpi/mpi_cluster.cpp), loaded when a launcher started the
// process or a command needs MPI: a machine without MPI runs porta-bench as before.
#include <cstddef>
#include <string>
#include <vector>

namespace porta::bench {

enum class Collective { AllReduce, AllGather, ReduceScatter, Broadcast };
enum class CommType { F32, BF16 };  // bf16 is summed by a user-defined reduction (f32 accumulation per pair)

class Cluster {
 public:
  virtual ~Cluster() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;  // among the ranks of this node (MPI_COMM_TYPE_SHARED)
  virtual std::string transport() const = 0;  // "mpi (Open MPI v4.1.4 ...)" or "none"

  // The helpers below (gather, broadcast, max, barrier) end the whole job, with a message, when a
  // rank has not joined within this many seconds, rather than let it hang. 600 s until set.
  virtual void set_timeout(double seconds) = 0;
  // Every rank's `text`, in rank order, at rank 0; the others get an empty list.
  virtual std::vector<std::string> gather(const std::string& text) = 0;
  // Rank 0's `bytes` at `data`, on every rank; and the largest of every rank's `value`.
  virtual void broadcast(void* data, std::size_t bytes) = 0;
  virtual double max(double value) = 0;
  virtual void barrier() = 0;

  // One blocking collective over every rank. `count` is the elements of the whole buffer for
  // AllReduce and Broadcast (root 0), and of one rank's part for AllGather (send: count, receive:
  // count x size) and ReduceScatter (send: count x size, receive: count).
  virtual void run(Collective op, CommType type, const void* send, void* recv, std::size_t count) = 0;
  // A non-blocking sum of `count` f32 over every rank into `recv`, started now: a handle for
  // finish(), which polls until it is done and ends the whole job, naming `what` (the collective,
  // which buffer), when it is not done within the timeout above. `send` and `recv` must stay
  // untouched until then. Every handle must be finished once; when all started ones have been,
  // handles start from 0 again. MPI advances started collectives only inside its calls: progress()
  // is one.
  virtual int start_allreduce(const float* send, float* recv, std::size_t count) = 0;
  virtual void progress() = 0;
  virtual void finish(int handle, const std::string& what) = 0;

  // The seconds per call of `iterations` plain MPI_Allreduce calls on `count` f32 (the slowest rank's),
  // with nothing of porta around them: the reference that porta-bench comm's allreduce is held to.
  virtual double reference_allreduce_s(std::size_t count, int iterations) = 0;

  // Ends every process of the job with `code`, after `message` on stderr.
  [[noreturn]] virtual void abort(int code, const std::string& message) = 0;
};

// The job this process belongs to, opened on first use. With `need_mpi` false, MPI is loaded only
// where a launcher started the process; a job of one otherwise. Throws porta::Error Unsupported
// where MPI is needed and this build or machine has none, with the loader's words.
Cluster& cluster(bool need_mpi = false);
// The job if it was opened and has more than one rank, else null: main() ends such a job on an error.
Cluster* open_job();
// Whether a launcher (mpirun, srun, hydra) started this process, from the variables it sets.
bool launched_by_mpi();

// A device spec with ":local" (cuda:local, hip:local, opencl:local) made the device of this node's
// local rank ("cuda:1"); "cpu:local" is the cpu device. Other specs are returned as they are.
std::string local_device_spec(const std::string& spec, int local_rank);

}  // namespace porta::bench

// The module's one entry point: the job, after MPI_Init; or null with the reason in `error`.
extern "C" porta::bench::Cluster* porta_bench_mpi_open(char* error, std::size_t error_size);
