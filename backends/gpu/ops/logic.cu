// Comparisons, logical ops and where, element by element through the operands' broadcast maps,
// with the semantics of core/ref/index_ops.cpp: integers compare exactly, floats as f32, and
// where moves its elements as bits, so that it is exact for every dtype.
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"
#include "core/runtime/logic_math.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

__global__ void compare_kernel(gpu::CompareArgs args) {
  auto* y = static_cast<unsigned char*>(args.y);
  const bool exact = is_integer(args.dtype);
  for (std::int64_t i = first_thread(); i < args.count; i += thread_count()) {
    const std::int64_t a = map_index(args.a, i), b = map_index(args.b, i);
    y[i] = exact ? compare(args.op, load_integer(args.a_data, a, args.dtype), load_integer(args.b_data, b, args.dtype))
                 : compare(args.op, load(args.a_data, a, args.dtype), load(args.b_data, b, args.dtype));
  }
}

__global__ void logical_kernel(gpu::LogicalArgs args) {
  const auto* a = static_cast<const unsigned char*>(args.a_data);
  const auto* b = static_cast<const unsigned char*>(args.b_data);
  auto* y = static_cast<unsigned char*>(args.y);
  for (std::int64_t i = first_thread(); i < args.count; i += thread_count()) {
    const bool x = a[map_index(args.a, i)] != 0;
    y[i] = logical(args.op, x, args.op != LogicalOp::Not && b[map_index(args.b, i)] != 0);
  }
}

template <class Bits> __global__ void where_kernel(gpu::WhereArgs args) {
  const auto* cond = static_cast<const unsigned char*>(args.cond_data);
  const auto* x = static_cast<const Bits*>(args.x_data);
  const auto* other = static_cast<const Bits*>(args.other_data);
  auto* y = static_cast<Bits*>(args.y);
  for (std::int64_t i = first_thread(); i < args.count; i += thread_count())
    y[i] = cond[map_index(args.cond, i)] != 0 ? x[map_index(args.x, i)] : other[map_index(args.other, i)];
}

template <class Args> void launch_elementwise(void (*kernel)(Args), const Args& args, const gpu::DeviceLimits& limits,
                                              gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch(args.count, limits);
  if (!g.empty()) gpu_launch(kernel, grid_of(g), block_of(g), stream, args);
}

}  // namespace

void launch_compare(const gpu::CompareArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  launch_elementwise(compare_kernel, args, limits, stream);
}

void launch_logical(const gpu::LogicalArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  launch_elementwise(logical_kernel, args, limits, stream);
}

void launch_where(const gpu::WhereArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  launch_by_size<gpu::WhereArgs>({where_kernel<unsigned char>, where_kernel<unsigned short>, where_kernel<unsigned>,
                                  where_kernel<unsigned long long>},
                                 args, limits, stream);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
