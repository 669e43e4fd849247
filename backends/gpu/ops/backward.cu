// The backward ops and the fused loss: activation gradients one thread per element, max pooling's
// gradient one thread per input element gathering from the windows that took it (no atomics, one
// sum order), depthwise conv2d's filter gradient one thread per tap (the images in order), softmax
// cross-entropy one thread per row, and its gradient (integer labels) a thread per row for short rows,
// a block per row for long ones.
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"
#include "core/runtime/backward_math.h"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

__global__ void activation_backward_kernel(gpu::ActivationBackwardArgs args) {
  for (std::int64_t i = first_thread(); i < args.count; i += thread_count()) {
    const float d = activation_derivative(args.forward, load(args.x, i, args.dtype));
    store(args.dx, i, args.dtype, load(args.dy, i, args.dtype) * d);
  }
}

__global__ void max_pool_backward_kernel(gpu::MaxPoolBackwardArgs args) {
  const gpu::PoolArgs& a = args.window;
  const std::int64_t count = a.planes * a.h * a.w;
  for (std::int64_t i = first_thread(); i < count; i += thread_count()) {
    const std::int64_t iw = i % a.w, ih = (i / a.w) % a.h, plane = i / (a.h * a.w);
    const auto x = [&](std::int64_t h, std::int64_t w) { return load(a.x, (plane * a.h + h) * a.w + w, a.dtype); };
    const auto dy = [&](std::int64_t h, std::int64_t w) { return load(args.dy, (plane * a.p + h) * a.q + w, a.dtype); };
    store(args.dx, i, a.dtype, max_pool_input_gradient(a, a.h, a.w, a.p, a.q, ih, iw, x, dy));
  }
}

__global__ void depthwise_gradient_kernel(gpu::DepthwiseGradientArgs args) {
  const std::int64_t taps = args.r * args.s, count = args.c * taps;
  for (std::int64_t i = first_thread(); i < count; i += thread_count()) {
    const std::int64_t channel = i / taps;
    float sum = 0.0f;
    for (std::int64_t image = 0; image < args.n; ++image) {
      const std::int64_t x0 = (image * args.c + channel) * args.h * args.w;
      const std::int64_t dy0 = (image * args.c + channel) * args.p * args.q;
      const auto x = [&](std::int64_t h, std::int64_t w) { return load(args.x, x0 + h * args.w + w, args.dtype); };
      const auto dy = [&](std::int64_t h, std::int64_t w) { return load(args.dy, dy0 + h * args.q + w, args.dtype); };
      sum += depthwise_tap_gradient(args, args.h, args.w, args.p, args.q, i / args.s % args.r, i % args.s, x, dy);
    }
    store(args.dw, i, args.dtype, sum);
  }
}

// The class of `row`'s i64 or i32 label, or -1 for a label outside [0, classes) (a negative one too:
// labels do not count from the end), which *error reports.
__device__ std::int64_t label_class(const void* labels, std::int64_t row, bool index64, std::int64_t classes,
                                    gpu::IndexError* error) {
  return checked_coordinate(load_integer(labels, row, index64 ? DType::i64 : DType::i32), classes, error, false);
}

__global__ void softmax_cross_entropy_kernel(gpu::SoftmaxCrossEntropyArgs args) {
  for (std::int64_t row = first_thread(); row < args.rows; row += thread_count()) {
    const std::int64_t base = row * args.classes;
    const auto z = [&](std::int64_t c) { return load(args.z, base + c, args.dtype); };
    const auto labels = [&](std::int64_t c) { return load(args.labels, base + c, args.dtype); };
    float total = 0.0f;  // for a label out of range too
    if (!args.index_labels)
      total = cross_entropy_row<float>(args.classes, z, labels);
    else if (const auto label = label_class(args.labels, row, args.index64, args.classes, args.error); label >= 0)
      total = cross_entropy_index_row<float>(args.classes, z, label);
    store(args.loss, row, args.dtype, total);
  }
}

// The gradient for short rows: a thread per row.
__global__ void softmax_cross_entropy_backward_row_per_thread_kernel(gpu::SoftmaxCrossEntropyBackwardArgs args) {
  for (std::int64_t row = first_thread(); row < args.rows; row += thread_count()) {
    const std::int64_t base = row * args.classes;
    const auto z = [&](std::int64_t c) { return load(args.z, base + c, args.dtype); };
    const std::int64_t label = label_class(args.labels, row, args.index64, args.classes, args.error);
    const float top = row_max<float>(args.classes, z), sum = exp_sum_row<float>(args.classes, z, top);
    const float dy = load(args.dy, row, args.dtype);
    for (std::int64_t c = 0; c < args.classes; ++c)
      store(args.dz, base + c, args.dtype, cross_entropy_index_gradient<float>(z(c), top, sum, c == label, dy));
  }
}

// The gradient for long rows: a block per row, its maximum and sum reduced as softmax's kernel does.
__global__ void softmax_cross_entropy_backward_kernel(gpu::SoftmaxCrossEntropyBackwardArgs args) {
  __shared__ float scratch[256];
  for (std::int64_t row = blockIdx.x; row < args.rows; row += gridDim.x) {
    const std::int64_t base = row * args.classes;
    const auto z = [&](std::int64_t c) { return load(args.z, base + c, args.dtype); };
    float top = -INFINITY;
    for (std::int64_t c = threadIdx.x; c < args.classes; c += blockDim.x) top = fmaxf(top, z(c));
    top = block_reduce(top, scratch, [](float a, float b) { return fmaxf(a, b); });
    float sum = 0.0f;
    for (std::int64_t c = threadIdx.x; c < args.classes; c += blockDim.x) sum += expf(z(c) - top);
    sum = block_reduce(sum, scratch, [](float a, float b) { return a + b; });
    const std::int64_t label = label_class(args.labels, row, args.index64, args.classes, args.error);
    const float dy = load(args.dy, row, args.dtype);
    for (std::int64_t c = threadIdx.x; c < args.classes; c += blockDim.x)
      store(args.dz, base + c, args.dtype, cross_entropy_index_gradient<float>(z(c), top, sum, c == label, dy));
  }
}

}  // namespace

void launch_activation_backward(const gpu::ActivationBackwardArgs& args, const gpu::DeviceLimits& limits,
                                gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch(args.count, limits);
  if (!g.empty()) gpu_launch(activation_backward_kernel, grid_of(g), block_of(g), stream, args);
}

void launch_max_pool_backward(const gpu::MaxPoolBackwardArgs& args, const gpu::DeviceLimits& limits,
                              gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch(args.window.planes * args.window.h * args.window.w, limits);
  if (!g.empty()) gpu_launch(max_pool_backward_kernel, grid_of(g), block_of(g), stream, args);
}

void launch_depthwise_gradient(const gpu::DepthwiseGradientArgs& args, const gpu::DeviceLimits& limits,
                               gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch(args.c * args.r * args.s, limits);
  if (!g.empty()) gpu_launch(depthwise_gradient_kernel, grid_of(g), block_of(g), stream, args);
}

void launch_softmax_cross_entropy(const gpu::SoftmaxCrossEntropyArgs& args, const gpu::DeviceLimits& limits,
                                  gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch(args.rows, limits);
  if (!g.empty()) gpu_launch(softmax_cross_entropy_kernel, grid_of(g), block_of(g), stream, args);
}

void launch_softmax_cross_entropy_backward(const gpu::SoftmaxCrossEntropyBackwardArgs& args,
                                           const gpu::DeviceLimits& limits, gpuStream_t stream) {
  if (gpu::thread_per_row(args.classes)) {
    const gpu::LaunchGeometry g = gpu::elementwise_launch(args.rows, limits);
    if (!g.empty())
      gpu_launch(softmax_cross_entropy_backward_row_per_thread_kernel, grid_of(g), block_of(g), stream, args);
    return;
  }
  const gpu::LaunchGeometry g = gpu::row_launch(args.rows, args.classes, limits);
  if (!g.empty()) gpu_launch(softmax_cross_entropy_backward_kernel, grid_of(g), block_of(g), stream, args);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
