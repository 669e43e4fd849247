// Cast with an integer or bool side (float-to-float casts are unary_kernel's Identity): integers
// convert exactly among themselves, floats truncate toward zero (NaN to 0, saturating) or test
// != 0 for bool, as porta::store_from_f32 does on the host.
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

// i32 keeps the low 32 bits, as porta::store_from_i64.
__device__ void store_integer(void* data, std::int64_t i, DType t, std::int64_t v) {
  if (t == DType::i64) static_cast<std::int64_t*>(data)[i] = v;
  else if (t == DType::i32) static_cast<std::int32_t*>(data)[i] = static_cast<std::int32_t>(v);
  else static_cast<unsigned char*>(data)[i] = v != 0 ? 1 : 0;
}

// porta::truncate_to_i64 for a float.
__device__ std::int64_t truncate(float v) {
  if (!(v == v)) return 0;
  if (v >= 0x1p63f) return INT64_MAX;
  if (v <= -0x1p63f) return INT64_MIN;
  return static_cast<std::int64_t>(v);
}

__global__ void integer_cast_kernel(gpu::UnaryArgs args) {
  for (std::int64_t i = first_thread(); i < args.count; i += thread_count()) {
    if (is_integer(args.x_dtype)) {
      const std::int64_t v = load_integer(args.x, i, args.x_dtype);
      if (is_integer(args.y_dtype)) store_integer(args.y, i, args.y_dtype, v);
      else store(args.y, i, args.y_dtype, static_cast<float>(v));
    } else {
      const float v = load(args.x, i, args.x_dtype);
      store_integer(args.y, i, args.y_dtype, args.y_dtype == DType::boolean ? v != 0.0f : truncate(v));
    }
  }
}

}  // namespace

void launch_integer_cast(const gpu::UnaryArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch(args.count, limits);
  if (!g.empty()) gpu_launch(integer_cast_kernel, grid_of(g), block_of(g), stream, args);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
