#include "backends/gpu/runtime/context.hpp"

#include "backends/gpu/runtime/check.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {

void DeviceContext::make_current() const { check(gpuSetDevice(ordinal_), spec_, "selecting the device"); }

Stream::Stream(const DeviceContext& context) {
  context.make_current();
  gpuStream_t s = nullptr;
  check(gpuStreamCreateWithFlags(&s, gpuStreamNonBlocking), context.spec(), "creating a stream");
  stream_.reset(s);
}

void Stream::synchronize(const DeviceContext& context, std::string_view what) const {
  check(gpuStreamSynchronize(stream_.get()), context.spec(), what);
}

Event make_event(const DeviceContext& context) {
  gpuEvent_t e = nullptr;
  check(gpuEventCreate(&e), context.spec(), "creating an event");
  return Event(e);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
