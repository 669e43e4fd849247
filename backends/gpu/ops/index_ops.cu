// Gather: the element of the row that each index names, moved as bits so that it is exact for
// every dtype. A negative index counts from the end, as on ref (core/ref/index_ops.cpp); one out
// of range gathers zeros and is reported through args.error, which the runtime turns into ref's
// error after the run (runtime/program.cpp), so that no read-back stops graph capture.
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

template <class Bits, class Index> __global__ void index_gather_kernel(gpu::IndexGatherArgs args) {
  const auto* data = static_cast<const Bits*>(args.data);
  const auto* indices = static_cast<const Index*>(args.indices);
  auto* y = static_cast<Bits*>(args.y);
  for (std::int64_t i = first_thread(); i < args.count; i += thread_count()) {
    const std::int64_t inner = i % args.inner, row = i / args.inner;
    const std::int64_t j = row % args.index_count, outer = row / args.index_count;
    const std::int64_t at = checked_coordinate(static_cast<std::int64_t>(indices[j]), args.axis, args.error);
    y[i] = at < 0 ? Bits{} : data[(outer * args.axis + at) * args.inner + inner];
  }
}

}  // namespace

void launch_index_gather(const gpu::IndexGatherArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  if (args.index64)
    launch_by_size<gpu::IndexGatherArgs>({index_gather_kernel<unsigned char, std::int64_t>,
                                          index_gather_kernel<unsigned short, std::int64_t>,
                                          index_gather_kernel<unsigned, std::int64_t>,
                                          index_gather_kernel<unsigned long long, std::int64_t>},
                                         args, limits, stream);
  else
    launch_by_size<gpu::IndexGatherArgs>({index_gather_kernel<unsigned char, std::int32_t>,
                                          index_gather_kernel<unsigned short, std::int32_t>,
                                          index_gather_kernel<unsigned, std::int32_t>,
                                          index_gather_kernel<unsigned long long, std::int32_t>},
                                         args, limits, stream);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
