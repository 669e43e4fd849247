// Binary ops with numpy broadcasting, unary ops (activations, elementwise math, Cast) and the epilogue of vendor
// library calls: grid-stride loops with several loads in flight per thread (grid_stride_batched).
#include "backends/gpu/ops/device_math.cuh"
#include "backends/gpu/ops/ops.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
namespace {

__device__ float apply(gpu::BinaryOp op, float a, float b) {
  switch (op) {
    case gpu::BinaryOp::Add: return a + b;
    case gpu::BinaryOp::Sub: return a - b;
    case gpu::BinaryOp::Mul: return a * b;
    case gpu::BinaryOp::Div: return a / b;
    case gpu::BinaryOp::Pow: return powf(a, b);
  }
  return a;
}

__device__ float apply(const gpu::UnaryArgs& args, float x) {
  switch (args.op) {
    case gpu::UnaryOp::Identity: return x;
    case gpu::UnaryOp::Relu: return x > 0.0f ? x : 0.0f;
    case gpu::UnaryOp::Clip: return clip(x, args.lo, args.hi);
    case gpu::UnaryOp::Sigmoid: return sigmoid(x);
    case gpu::UnaryOp::Silu: return x * sigmoid(x);
    case gpu::UnaryOp::Tanh: return tanhf(x);
    case gpu::UnaryOp::Gelu: return gelu(x);
    case gpu::UnaryOp::GeluTanh: return gelu_tanh(x);
    case gpu::UnaryOp::Erf: return erff(x);
    case gpu::UnaryOp::Sqrt: return sqrtf(x);
    case gpu::UnaryOp::Reciprocal: return 1.0f / x;
    case gpu::UnaryOp::HardSigmoid: return clip(args.lo * x + args.hi, 0.0f, 1.0f);
    case gpu::UnaryOp::HardSwish: return x * clip(x * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f);
  }
  return x;
}

__global__ void binary_kernel(gpu::BinaryArgs args) {
  grid_stride_batched(
      args.count,
      [&](std::int64_t i) {
        const float a = load(args.a_data, map_index(args.a, i), args.dtype);
        return apply(args.op, a, load(args.b_data, map_index(args.b, i), args.dtype));
      },
      [&](std::int64_t i, float y) { store(args.y, i, args.dtype, y); });
}

__global__ void unary_kernel(gpu::UnaryArgs args) {
  grid_stride_batched(
      args.count, [&](std::int64_t i) { return apply(args, load(args.x, i, args.x_dtype)); },
      [&](std::int64_t i, float y) { store(args.y, i, args.y_dtype, y); });
}

__global__ void epilogue_kernel(gpu::EpilogueArgs args) {
  grid_stride_batched(
      args.count,
      [&](std::int64_t i) {
        float y = load(args.y, i, args.dtype);
        if (args.addend != nullptr)
          y += args.addend_scale * load(args.addend, map_index(args.addend_map, i), args.dtype);
        if (args.residual != nullptr) y += load(args.residual, i, args.dtype);
        return y;
      },
      [&](std::int64_t i, float y) { store(args.y, i, args.dtype, activate(args.activation, y)); });
}

}  // namespace

void launch_binary(const gpu::BinaryArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch(args.count, limits);
  if (!g.empty()) gpu_launch(binary_kernel, grid_of(g), block_of(g), stream, args);
}

void launch_unary(const gpu::UnaryArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch(args.count, limits);
  if (!g.empty()) gpu_launch(unary_kernel, grid_of(g), block_of(g), stream, args);
}

void launch_epilogue(const gpu::EpilogueArgs& args, const gpu::DeviceLimits& limits, gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch(args.count, limits);
  if (!g.empty()) gpu_launch(epilogue_kernel, grid_of(g), block_of(g), stream, args);
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
