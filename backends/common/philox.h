/* Philox-4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw ("Parallel random
 * numbers: as easy as 1, 2, 3", SC 2011), and dropout's mask drawn from it, in the C that OpenCL C,
 * CUDA, HIP and C++ all compile: the host kernels and backends/gpu/ops/dropout.cu include this file,
 * and the OpenCL backend embeds it before backends/opencl/kernels/dropout.cl
 * (backends/opencl/kernel_programs.cpp). Integer arithmetic only, so every device draws the same
 * bits. */
#ifndef PORTA_PHILOX_H
#define PORTA_PHILOX_H

#ifdef __OPENCL_VERSION__
#define PORTA_PHILOX_FUNCTION
typedef uint philox_u32;
typedef ulong philox_u64;
typedef long philox_i64;
#else
#if defined(__CUDACC__) || defined(__HIPCC__)
#define PORTA_PHILOX_FUNCTION __host__ __device__ inline
#else /* C++ on the host, the GPU emulation included */
#define PORTA_PHILOX_FUNCTION inline
#endif
typedef unsigned int philox_u32;
typedef unsigned long long philox_u64;
typedef long long philox_i64;
#endif

/* Ten rounds of Philox-4x32 on the counter c under the key (k0, k1), in place. */
PORTA_PHILOX_FUNCTION void philox4x32_10(philox_u32* c, philox_u32 k0, philox_u32 k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const philox_u64 p0 = (philox_u64)0xD2511F53u * c[0], p1 = (philox_u64)0xCD9E8D57u * c[2];
    const philox_u32 c1 = c[1], c3 = c[3];
    c[0] = (philox_u32)(p1 >> 32) ^ c1 ^ k0;
    c[1] = (philox_u32)p1;
    c[2] = (philox_u32)(p0 >> 32) ^ c3 ^ k1;
    c[3] = (philox_u32)p0;
  }
}

/* The 32 random bits of element i of stream (seed, step): word i % 4 of the block whose counter is
 * (i / 4, step) under the key seed. A pure function of its arguments, so any thread may draw any
 * element in any order. */
PORTA_PHILOX_FUNCTION philox_u32 philox_bits(philox_u64 seed, philox_u32 step, philox_u64 i) {
  philox_u32 c[4] = {(philox_u32)(i >> 2), (philox_u32)(i >> 34), step, 0u};
  philox4x32_10(c, (philox_u32)seed, (philox_u32)(seed >> 32));
  return c[i & 3u];
}

/* The step a dropout node reads from its f32 step tensor: the integer part of a non-negative value
 * (exact below 2^24). */
PORTA_PHILOX_FUNCTION philox_u32 dropout_step(float step) { return (philox_u32)(philox_i64)step; }

/* Dropout keeps element i where its bits reach `threshold`, the drop ratio's share of 2^32
 * (core/runtime/op_math.hpp's dropout_mask), so the decision needs no float. */
PORTA_PHILOX_FUNCTION int dropout_keeps(philox_u64 seed, philox_u32 step, philox_u64 i, philox_u32 threshold) {
  return philox_bits(seed, step, i) >= threshold;
}

#endif
