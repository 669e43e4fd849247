#pragma once
// `porta-bench comm`: the collectives of data-parallel work (allreduce, allgather, reduce-scatter,
// broadcast) over the job's MPI on host buffers or NCCL on device buffers, from a few bytes to
// --max-bytes, f32 and bf16, each verified against a serial computation, with nccl-tests'
// algorithm and bus bandwidths; and host-device copy bandwidth, pinned and pageable. Written as the
// `comm` suite's results.json, results.csv and report.html, as `run` writes a suite's.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace porta::bench {

struct CommArgs {
  std::uint64_t min_bytes = 8, max_bytes = 256ull << 20;
  int factor = 2;
  std::vector<std::string> ops{"allreduce", "allgather", "reduce-scatter", "broadcast"};
  std::vector<std::string> dtypes{"f32", "bf16"};
  int warmup = 2, min_iterations = 5;
  double min_time_s = 0.05;
  bool reference = true;  // time a plain MPI_Allreduce loop beside each f32 allreduce
  std::vector<std::string> transports{"mpi"};
  std::vector<std::string> devices;  // whose host-device copies to time
  std::string out;
  double rank_timeout_s = 600.0;
};

class Cluster;

CLI::App* add_comm_command(CLI::App& app, CommArgs& args);
// Every rank runs it; rank 0 prints the table and writes the files into `dir`. Returns 1 when a
// result was wrong, else 0.
int run_comm(const CommArgs& args, Cluster& job, const std::filesystem::path& dir, const std::string& command_line);

// The ops of comm's rows: the report charts their bus bandwidth rather than a GFLOP/s bar.
bool is_comm_op(const std::string& op);

// "8 B", "64 KiB", "1 GiB": a buffer size as comm's rows and charts name it.
std::string size_text(std::uint64_t bytes);

// nccl-tests' bus bandwidth factor of a collective over `ranks`: 2(n-1)/n for allreduce, (n-1)/n for
// allgather and reduce-scatter, 1 for broadcast.
double bus_factor(const std::string& op, int ranks);

}  // namespace porta::bench
