#pragma once
#include <mutex>

#include "core/runtime/backend.hpp"
#include "porta/executable.hpp"

namespace porta::detail {

class ExecutableImpl {
 public:
  ExecutableImpl(std::shared_ptr<DeviceImpl> device, std::shared_ptr<const CompiledGraph> compiled);

  // Writes an input's or a variable's bytes (in its dtype, or f32 values to convert).
  void set(const TensorInfo& info, std::span<const std::byte> bytes, bool from_f32);
  void set_input(std::string_view name, std::span<const std::byte> bytes, bool from_f32) {
    set(input(name), bytes, from_f32);
  }
  void run(const RunOptions& options = {});
  RunTime last_run_time() const;
  std::vector<std::byte> output_bytes(std::string_view name) const;
  std::vector<std::byte> variable_bytes(std::string_view name) const;

  const TensorInfo& input(std::string_view name) const;
  const TensorInfo& variable(std::string_view name) const;
  Tensor output(std::string_view name) const;
  std::vector<NodeTiming> node_timings() const;
  std::vector<NodePlan> node_plans() const;
  const CompiledGraph& compiled() const { return *compiled_; }
  const DeviceInfo& device() const { return device_->info(); }

 private:
  template <class Entry, class Make>
  std::vector<Entry> per_node(std::size_t steps, Make make) const;
  std::vector<std::byte> read(Tensor t) const;  // from the arena or the constants, under the lock
  std::vector<std::byte> read_locked(Tensor t) const;  // the same, the lock already held
  void plan_reports();
  void report(std::size_t step, const RunOptions& options) const;  // the outputs made by that step

  std::shared_ptr<DeviceImpl> device_;
  std::shared_ptr<const CompiledGraph> compiled_;
  std::unique_ptr<DeviceBuffer> arena_;
  std::unique_ptr<DeviceBuffer> constants_;
  std::unique_ptr<Program> program_;
  std::vector<std::pair<std::size_t, std::size_t>> poisoned_;  // arena (offset, bytes) of intermediates
  std::vector<double> node_seconds_;
  // Per step of the order, and one past it (outputs no node makes), the outputs (indices into the
  // graph's) complete after it; and the steps that have any.
  std::vector<std::vector<std::size_t>> outputs_after_;
  std::vector<std::uint8_t> report_steps_;
  std::vector<std::string> node_plans_;  // recorded on the first run
  bool planned_ = false;                 // the first run has recorded them
  RunTime last_run_;
  mutable std::mutex mutex_;  // one run, set_input or read at a time
};

}  // namespace porta::detail
