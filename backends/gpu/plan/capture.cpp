#include "backends/gpu/plan/capture.hpp"

namespace porta::detail::gpu {

RunMode CapturePolicy::next_run(const void* arena, const void* constants, bool profiling) {
  if (!enabled_ || profiling) return RunMode::Eager;
  const bool same_buffers = arena == arena_ && constants == constants_;
  if (have_graph_ && same_buffers) return RunMode::Replay;
  if (!same_buffers) {
    arena_ = arena;
    constants_ = constants;
    have_graph_ = false;
    eager_runs_ = 0;
  }
  if (eager_runs_ == 0) {
    ++eager_runs_;
    return RunMode::Eager;
  }
  return RunMode::Capture;
}

}  // namespace porta::detail::gpu
