// Transpose, Slice and Expand: a gather through a strided index map. Pad: a gather that writes
// its constant where the map leaves the input. Reshape and concat are plain copies that the
// runtime enqueues with gpuMemcpy*Async; they need no kernel.
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

// Elements move as bits, so the copies are exact for every dtype (NaN payloads included).
template <class Bits> __global__ void gather_kernel(gpu::GatherArgs args) {
  const auto* x = static_cast<const Bits*>(args.x_data) + args.x_offset;
  auto* y = static_cast<Bits*>(args.y);
  for (std::int64_t i = first_thread(); i < args.count; i += thread_count()) y[i] = x[map_index(args.x, i)];
}

template <class Bits> __global__ void pad_kernel(gpu::PadArgs args) {
  const auto* x = static_cast<const Bits*>(args.x);
  auto* y = static_cast<Bits*>(args.y);
  const auto value = static_cast<Bits>(args.value);
  for (std::int64_t i = first_thread(); i < args.count; i += thread_count()) {
    const std::int64_t from = gpu::pad_index(args, i);
    y[i] = from < 0 ? value : x[from];
  }
}

}  // namespace

void launch_gather(const gpu::GatherArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  launch_by_size<gpu::GatherArgs>({gather_kernel<unsigned char>, gather_kernel<unsigned short>,
                                   gather_kernel<unsigned>, gather_kernel<unsigned long long>},
                                  args, limits, stream);
}

void launch_pad(const gpu::PadArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  launch_by_size<gpu::PadArgs>({pad_kernel<unsigned char>, pad_kernel<unsigned short>, pad_kernel<unsigned>,
                                pad_kernel<unsigned long long>},
                               args, limits, stream);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
