#pragma once
// A graph compiled for one device: set inputs, run, read outputs.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "porta/device.hpp"

namespace porta {

namespace detail {
class ExecutableImpl;
}

// Which clock measured a run's time.
enum class RunClock : std::uint8_t {
  None,    // nothing measured: no run yet, or a run that gave the device no work
  Device,  // the device's own timestamps: OpenCL profiling events, CUDA/HIP events on the run's stream
  Host,    // steady_clock around the backend's work, for backends whose work runs on the host (ref, cpu)
};
std::string_view to_string(RunClock clock) noexcept;  // "none", "device-event", "host"

// The time of one run as its backend measured it: from the start of its first command to the end
// of its last, without porta's own work around the backend's run (locking, input poisoning, the
// call). With RunClock::Device it is on the device's clock: the host's wait for the result is left
// out, any gap where the device waits for the next launch is in. An OpenCL device's queue is shared
// by its executables, so another executable's run on another thread can fall inside the span.
struct RunTime {
  double seconds = 0.0;
  RunClock clock = RunClock::None;
};

struct NodeTiming {
  std::string name;
  OpKind op;
  double seconds = 0.0;
};

// What the backend chose for a node: its kernels' plans in one line each, "; " between distinct
// ones, e.g. "gemm blocked kernel=avx512_16x32 ...". Empty where the kernel makes no plan (an
// elementwise op, the ref backend, a backend that records none yet). backends/cpu/plans/README.md
// says what the fields mean.
struct NodePlan {
  std::string name;
  OpKind op;
  std::string plan;
};

// What a caller asks of one run.
struct RunOptions {
  // When set, called once per output of the graph during the run, as soon as the backend knows its
  // bytes complete, with its name and bytes (storage dtype; valid during the call only), in the
  // execution order of the nodes that make them; outputs that no node makes (an input, a constant,
  // a variable as the run found it) come last. On ref and cpu it is called from the run's thread
  // right after the node; on OpenCL once the queue has finished that node (the run waits for the
  // device there, so each call costs a round trip); on CUDA and HIP every output is reported
  // once the whole run has finished (a backend that cannot report early may do so). The callback must not
  // call this Executable (the run holds its lock); an exception from it ends the run and propagates.
  std::function<void(std::string_view output, std::span<const std::byte> bytes)> output_ready;
};

class Executable {
 public:
  explicit Executable(std::unique_ptr<detail::ExecutableImpl> impl);
  Executable(Executable&&) noexcept;
  Executable& operator=(Executable&&) noexcept;
  ~Executable();

  // Values are converted to the input's dtype. A strided input takes the caller's whole buffer:
  // every element the strides address must lie inside `values`.
  void set_input(std::string_view name, std::span<const float> values);
  void set_input_bytes(std::string_view name, std::span<const std::byte> bytes);  // storage dtype

  // Runs the whole graph and waits for it. Safe to call from several threads: runs are serialized.
  void run();
  void run(const RunOptions& options);
  // The time of the last run, measured by the backend on every run (not only with
  // CompileOptions::profile). See RunTime.
  RunTime last_run_time() const;

  std::vector<float> output(std::string_view name) const;
  std::vector<std::byte> output_bytes(std::string_view name) const;  // storage dtype

  const TensorDesc& input_desc(std::string_view name) const;
  const TensorDesc& output_desc(std::string_view name) const;

  // The graph's variables (Graph::variable), kept on the device from run to run and updated there
  // by the runs; these copy them between host and device, e.g. for a checkpoint (porta/checkpoint.hpp).
  std::vector<std::string> variable_names() const;  // in the order the graph made them
  const TensorDesc& variable_desc(std::string_view name) const;
  std::vector<float> variable(std::string_view name) const;
  std::vector<std::byte> variable_bytes(std::string_view name) const;  // storage dtype
  void set_variable(std::string_view name, std::span<const float> values);  // converted to its dtype
  void set_variable_bytes(std::string_view name, std::span<const std::byte> bytes);

  // Per-node times of the last run, in execution order (needs CompileOptions::profile).
  std::vector<NodeTiming> node_timings() const;
  // What each node's kernels chose, recorded on the first run, in execution order; empty before it.
  std::vector<NodePlan> node_plans() const;

  // Device memory the plan needs (activation arena plus constants), known before the first run.
  std::uint64_t planned_peak_bytes() const;
  std::uint64_t graph_hash() const;  // structural: ops, params, shapes, dtypes and wiring
  const DeviceInfo& device() const;

 private:
  std::unique_ptr<detail::ExecutableImpl> impl_;
};

}  // namespace porta
