#pragma once
// Device-side helpers shared by the kernels: storage loads and stores (every dtype computes in
// f32), activations, index maps, grid-stride loops and block reductions.
#include <array>
#include <cstdint>
#include <type_traits>

#include "backends/gpu/compat/compat.hpp"
#include "backends/gpu/plan/kernel_args.hpp"
#include "backends/gpu/plan/launch.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {

__device__ inline float bf16_bits_to_float(unsigned short bits) { return __uint_as_float(unsigned{bits} << 16); }

// Round to nearest even, NaN stays a (quiet) NaN: the same rounding as porta::f32_to_bf16.
__device__ inline unsigned short float_to_bf16_bits(float value) {
  const unsigned x = __float_as_uint(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((x >> 16) | 0x40u);
  return static_cast<unsigned short>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// f32 rounded to tf32's 10 mantissa bits, to nearest with ties away from zero (cvt.rna.tf32.f32),
// still an f32: the tf32 operand of the matrix units, which read no more of it. Infinities and NaN
// pass unchanged.
__device__ inline float round_to_tf32(float value) {
  const unsigned x = __float_as_uint(value);
  if ((x & 0x7f800000u) == 0x7f800000u) return value;
  return __uint_as_float((x + 0x1000u) & 0xffffe000u);
}

// Storage access with the dtype fixed at compile time: for GEMM and conv, the hot loops.
template <DType T> __device__ inline float load(const void* data, std::int64_t i) {
  if constexpr (T == DType::f32) return static_cast<const float*>(data)[i];
  else if constexpr (T == DType::f16) return gpu_half_bits_to_float(static_cast<const unsigned short*>(data)[i]);
  else return bf16_bits_to_float(static_cast<const unsigned short*>(data)[i]);
}

template <DType T> __device__ inline void store(void* data, std::int64_t i, float value) {
  if constexpr (T == DType::f32) static_cast<float*>(data)[i] = value;
  else if constexpr (T == DType::f16) static_cast<unsigned short*>(data)[i] = gpu_float_to_half_bits(value);
  else static_cast<unsigned short*>(data)[i] = float_to_bf16_bits(value);
}

// ... and with the dtype known at run time: for the bandwidth-bound ops, where a uniform branch
// per element costs nothing beside the memory traffic and saves two instantiations of each kernel.
__device__ inline float load(const void* data, std::int64_t i, DType t) {
  switch (t) {
    case DType::f16: return load<DType::f16>(data, i);
    case DType::bf16: return load<DType::bf16>(data, i);
    default: return load<DType::f32>(data, i);
  }
}

__device__ inline void store(void* data, std::int64_t i, DType t, float value) {
  switch (t) {
    case DType::f16: store<DType::f16>(data, i, value); break;
    case DType::bf16: store<DType::bf16>(data, i, value); break;
    default: store<DType::f32>(data, i, value); break;
  }
}

__device__ inline bool is_integer(DType t) { return t == DType::i64 || t == DType::i32 || t == DType::boolean; }

// An integer or bool element, exactly (a bool as 0 or 1).
__device__ inline std::int64_t load_integer(const void* data, std::int64_t i, DType t) {
  if (t == DType::i64) return static_cast<const std::int64_t*>(data)[i];
  if (t == DType::i32) return static_cast<const std::int32_t*>(data)[i];
  return static_cast<const unsigned char*>(data)[i] != 0 ? 1 : 0;
}

// The coordinate along an axis of `extent` that an index names: in [0, extent), or, where `from_end`
// (gather's indices), in [-extent, 0) counted from the end. -1 for one out of range, which the first
// thread to find one writes to *error for the runtime to raise after the run (gpu::IndexError).
__device__ inline std::int64_t checked_coordinate(std::int64_t index, std::int64_t extent, gpu::IndexError* error,
                                                  bool from_end = true) {
  if (index < (from_end ? -extent : 0) || index >= extent) {
    if (atomicCAS(&error->raised, 0ull, 1ull) == 0ull) error->index = index;
    return -1;
  }
  return index < 0 ? index + extent : index;
}

// Four consecutive floats of shared memory in one 16-byte access; p is 16-byte aligned.
__device__ inline void shared4(const float* p, float* out) {
  const float4 v = *reinterpret_cast<const float4*>(p);
  out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
}

__device__ inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ inline float clip(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }
__device__ inline float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ inline float gelu_tanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}

// The fused epilogue activations, with the semantics of core/runtime/op_math.hpp.
__device__ inline float activate(Activation a, float x) {
  switch (a) {
    case Activation::None: return x;
    case Activation::Relu: return x > 0.0f ? x : 0.0f;
    case Activation::Relu6: return clip(x, 0.0f, 6.0f);
    case Activation::Sigmoid: return sigmoid(x);
    case Activation::Silu: return x * sigmoid(x);
    case Activation::Tanh: return tanhf(x);
    case Activation::Gelu: return gelu(x);
  }
  return x;
}

using gpu::map_index;

__device__ inline std::int64_t first_thread() { return std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; }
__device__ inline std::int64_t thread_count() { return std::int64_t{gridDim.x} * blockDim.x; }

// A grid-stride loop over [0, count) that takes each thread's indices `loads_in_flight` at a time,
// a grid apart (so each step of a warp stays coalesced): value(i) for all of them, then
// use(i, value) for each, so that the loads of a batch are in flight together rather than one
// load waiting on the store before it.
inline constexpr int loads_in_flight = 4;
template <class Value, class Use>
__device__ void grid_stride_batched(std::int64_t count, const Value& value, const Use& use) {
  const std::int64_t stride = thread_count();
  for (std::int64_t first = first_thread(); first < count; first += loads_in_flight * stride) {
    float values[loads_in_flight];
#pragma unroll
    for (int u = 0; u < loads_in_flight; ++u) {
      const std::int64_t i = first + u * stride;
      values[u] = i < count ? value(i) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < loads_in_flight; ++u) {
      const std::int64_t i = first + u * stride;
      if (i < count) use(i, values[u]);
    }
  }
}

// Reduces one value per thread over the block through shared memory (`scratch` holds blockDim.x
// floats). A tree over any block size: no warp size or lane mask is assumed. Every thread gets
// the result.
template <class Op> __device__ float block_reduce(float value, float* scratch, Op op) {
  scratch[threadIdx.x] = value;
  __syncthreads();
  for (unsigned active = blockDim.x; active > 1;) {
    const unsigned half = (active + 1) / 2;
    if (threadIdx.x < active - half) scratch[threadIdx.x] = op(scratch[threadIdx.x], scratch[threadIdx.x + half]);
    __syncthreads();
    active = half;
  }
  const float result = scratch[0];
  __syncthreads();  // scratch is reused by the next reduction
  return result;
}

inline dim3 grid_of(const gpu::LaunchGeometry& g) { return dim3(g.grid[0], g.grid[1], g.grid[2]); }
inline dim3 block_of(const gpu::LaunchGeometry& g) { return dim3(g.block[0], g.block[1], g.block[2]); }

// Launches the kernel for elements of args.element_bytes bytes among `kernels`, one kernel template
// instantiated for 1, 2, 4 and 8 bytes (moved as bits, so every dtype): one thread per element.
template <class Args>
void launch_by_size(const std::array<void (*)(Args), 4>& kernels, const Args& args, const gpu::DeviceLimits& limits,
                    gpuStream_t stream) {
  const gpu::LaunchGeometry g = gpu::elementwise_launch(args.count, limits);
  if (g.empty()) return;
  const int bytes = args.element_bytes;
  gpu_launch(kernels[bytes == 1 ? 0 : bytes == 2 ? 1 : bytes == 4 ? 2 : 3], grid_of(g), block_of(g), stream, args);
}

// Calls f(std::integral_constant<DType, t>{}): turns a run-time dtype into a template argument.
template <class F> void with_dtype(DType t, F&& f) {
  switch (t) {
    case DType::f32: f(std::integral_constant<DType, DType::f32>{}); break;
    case DType::f16: f(std::integral_constant<DType, DType::f16>{}); break;
    case DType::bf16: f(std::integral_constant<DType, DType::bf16>{}); break;
    case DType::i64: case DType::i32: case DType::boolean: break;  // refused before launch (float_only_reason)
  }
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
