#pragma once
// One opened GPU (ordinal, limits) and the RAII handles of the runtime objects used on it.
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "backends/gpu/compat/compat.hpp"
#include "backends/gpu/plan/launch.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {

class DeviceContext {
 public:
  DeviceContext(int ordinal, std::string spec, gpu::DeviceLimits limits)
      : ordinal_(ordinal), spec_(std::move(spec)), limits_(limits) {}

  // Makes this device current on the calling thread: every entry point calls it first, because
  // the runtime's current device is per thread and another device may have been used since.
  void make_current() const;

  int ordinal() const noexcept { return ordinal_; }
  const std::string& spec() const noexcept { return spec_; }
  const gpu::DeviceLimits& limits() const noexcept { return limits_; }

 private:
  int ordinal_;
  std::string spec_;
  gpu::DeviceLimits limits_;
};

// A non-blocking stream on the context's device. Each program has its own, so that runs of
// different executables neither serialize nor end up in each other's graph capture.
class Stream {
 public:
  explicit Stream(const DeviceContext& context);
  gpuStream_t get() const noexcept { return stream_.get(); }
  void synchronize(const DeviceContext& context, std::string_view what) const;

 private:
  struct Destroy {
    void operator()(gpuStream_t s) const noexcept { (void)gpuStreamDestroy(s); }
  };
  std::unique_ptr<std::remove_pointer_t<gpuStream_t>, Destroy> stream_;
};

struct DestroyEvent {
  void operator()(gpuEvent_t e) const noexcept { (void)gpuEventDestroy(e); }
};
using Event = std::unique_ptr<std::remove_pointer_t<gpuEvent_t>, DestroyEvent>;
Event make_event(const DeviceContext& context);

struct DestroyGraph {
  void operator()(gpuGraph_t g) const noexcept { (void)gpuGraphDestroy(g); }
};
struct DestroyGraphExec {
  void operator()(gpuGraphExec_t g) const noexcept { (void)gpuGraphExecDestroy(g); }
};
using GpuGraph = std::unique_ptr<std::remove_pointer_t<gpuGraph_t>, DestroyGraph>;
using GpuGraphExec = std::unique_ptr<std::remove_pointer_t<gpuGraphExec_t>, DestroyGraphExec>;

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
