#pragma once
// When a GPU program records its launches into a CUDA/HIP graph and when it replays one: host
// logic, separate from the runtime calls so that it is tested on the CPU.
#include <cstdint>

namespace porta::detail::gpu {

enum class RunMode : std::uint8_t {
  Eager,    // enqueue every node (first run, profiling, or graphs off)
  Capture,  // enqueue every node under stream capture, then launch the recorded graph
  Replay,   // launch the graph recorded before
};

// The first run is eager, so that a failing kernel is reported with its node and the program is
// warm; the second captures; later runs replay. A graph records device addresses, so it is
// re-captured when the buffers it ran on change. Profiled runs are eager (per-node events) and
// leave the graph alone. A capture that failed turns graphs off for the program.
class CapturePolicy {
 public:
  explicit CapturePolicy(bool graphs_enabled) : enabled_(graphs_enabled) {}

  RunMode next_run(const void* arena, const void* constants, bool profiling);
  void captured() noexcept { have_graph_ = true; }
  void capture_failed() noexcept {
    enabled_ = false;
    have_graph_ = false;
  }
  bool have_graph() const noexcept { return have_graph_; }

 private:
  bool enabled_;
  bool have_graph_ = false;
  int eager_runs_ = 0;
  const void* arena_ = nullptr;
  const void* constants_ = nullptr;
};

}  // namespace porta::detail::gpu
