// The backward ops and the fused loss: activation gradients one thread per element, max pooling's
// gradient one thread per input element gathering from the windows that took it (no atomics, one
// sum order), softmax cross-entropy one thread per row, and its gradient (integer labels) a thread
// per row for short rows, a block per row for long ones.
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"
#include "core/runtime/backward_math.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

__global__ void activation_backward_kernel(gpu::ActivationBackwardArgs args) {
  for (std::int64_t i = first_thread(); i < args.count; i += thread_count()) {
    const float d = activation_derivative(args.forward, load(args.x, i, args.dtype), args.lo, args.hi, args.gelu_tanh);
    store(args.dx, i, args.dtype, load(args.dy, i, args.dtype) * d);
  }
}

// Whether window (oh, ow) of the plane at `base` takes its first maximum at (ih, iw).
__device__ bool window_takes(const gpu::PoolArgs& a, std::int64_t base, std::int64_t oh, std::int64_t ow,
                             std::int64_t ih, std::int64_t iw) {
  const auto x = [&](std::int64_t h, std::int64_t w) { return load(a.x, base + h * a.w + w, a.dtype); };
  const WindowPosition m = window_argmax(a, a.h, a.w, oh, ow, x);
  return m.h == ih && m.w == iw;
}

__global__ void max_pool_backward_kernel(gpu::MaxPoolBackwardArgs args) {
  const gpu::PoolArgs& a = args.window;
  const std::int64_t count = a.planes * a.h * a.w;
  for (std::int64_t i = first_thread(); i < count; i += thread_count()) {
    const std::int64_t iw = i % a.w, ih = (i / a.w) % a.h, plane = i / (a.h * a.w);
    float sum = 0.0f;
    for (std::int64_t r = 0; r < a.kernel[0]; ++r) {
      const std::int64_t rows = ih + a.pad[0] - r * a.dilation[0];  // oh * stride for the window whose tap r is ih
      if (rows < 0 || rows % a.stride[0] != 0 || rows / a.stride[0] >= a.p) continue;
      for (std::int64_t s = 0; s < a.kernel[1]; ++s) {
        const std::int64_t cols = iw + a.pad[1] - s * a.dilation[1];
        if (cols < 0 || cols % a.stride[1] != 0 || cols / a.stride[1] >= a.q) continue;
        const std::int64_t oh = rows / a.stride[0], ow = cols / a.stride[1];
        if (window_takes(a, plane * a.h * a.w, oh, ow, ih, iw))
          sum += load(args.dy, (plane * a.p + oh) * a.q + ow, a.dtype);
      }
    }
    store(args.dx, i, a.dtype, sum);
  }
}

// The class of `row`'s i64 or i32 label, a negative one counted from the end (the host checked the range).
__device__ std::int64_t label_of(const void* labels, std::int64_t row, bool index64, std::int64_t classes) {
  const std::int64_t label = index64 ? static_cast<const std::int64_t*>(labels)[row]
                                     : std::int64_t{static_cast<const std::int32_t*>(labels)[row]};
  return label_class(label, classes);
}

__global__ void softmax_cross_entropy_kernel(gpu::SoftmaxCrossEntropyArgs args) {
  for (std::int64_t row = first_thread(); row < args.rows; row += thread_count()) {
    const std::int64_t base = row * args.classes;
    const auto z = [&](std::int64_t c) { return load(args.z, base + c, args.dtype); };
    const float total =
        args.index_labels
            ? cross_entropy_index_row<float>(args.classes, z, label_of(args.labels, row, args.index64, args.classes))
            : cross_entropy_row<float>(args.classes, z,
                                       [&](std::int64_t c) { return load(args.labels, base + c, args.dtype); });
    store(args.loss, row, args.dtype, total);
  }
}

// The gradient for short rows: a thread per row.
__global__ void softmax_cross_entropy_backward_row_per_thread_kernel(gpu::SoftmaxCrossEntropyBackwardArgs args) {
  for (std::int64_t row = first_thread(); row < args.rows; row += thread_count()) {
    const std::int64_t base = row * args.classes;
    cross_entropy_index_grad_row<float>(
        args.classes, [&](std::int64_t c) { return load(args.z, base + c, args.dtype); },
        label_of(args.labels, row, args.index64, args.classes), load(args.dy, row, args.dtype),
        [&](std::int64_t c, float v) { store(args.dz, base + c, args.dtype, v); });
  }
}

// The gradient for long rows: a block per row, as softmax's kernel, the label's class less dy.
__global__ void softmax_cross_entropy_backward_kernel(gpu::SoftmaxCrossEntropyBackwardArgs args) {
  __shared__ float scratch[256];
  for (std::int64_t row = blockIdx.x; row < args.rows; row += gridDim.x) {
    const std::int64_t base = row * args.classes;
    const auto z = [&](std::int64_t c) { return load(args.z, base + c, args.dtype); };
    float max = -INFINITY;
    for (std::int64_t c = threadIdx.x; c < args.classes; c += blockDim.x) max = fmaxf(max, z(c));
    max = block_reduce(max, scratch, [](float a, float b) { return fmaxf(a, b); });
    float sum = 0.0f;
    for (std::int64_t c = threadIdx.x; c < args.classes; c += blockDim.x) sum += expf(z(c) - max);
    sum = block_reduce(sum, scratch, [](float a, float b) { return a + b; });
    const std::int64_t label = label_of(args.labels, row, args.index64, args.classes);
    const float dy = load(args.dy, row, args.dtype);
    for (std::int64_t c = threadIdx.x; c < args.classes; c += blockDim.x)
      store(args.dz, base + c, args.dtype, dy * (expf(z(c) - max) / sum - (c == label ? 1.0f : 0.0f)));
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
