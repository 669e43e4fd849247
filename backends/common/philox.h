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

/* Block b of stream (seed, step), the four words of draws 4b .. 4b + 3: the counter (b, step) under
 * the key seed, written to words. */
PORTA_PHILOX_FUNCTION void philox_block(philox_u64 seed, philox_u32 step, philox_u64 b, philox_u32* words) {
  words[0] = (philox_u32)b;
  words[1] = (philox_u32)(b >> 32);
  words[2] = step;
  words[3] = 0u;
  philox4x32_10(words, (philox_u32)seed, (philox_u32)(seed >> 32));
}

/* The 32 random bits of draw i of stream (seed, step): word i % 4 of block i / 4. A pure function of
 * its arguments, so any thread may draw any element in any order. */
PORTA_PHILOX_FUNCTION philox_u32 philox_bits(philox_u64 seed, philox_u32 step, philox_u64 i) {
  philox_u32 words[4];
  philox_block(seed, step, i >> 2, words);
  return words[i & 3u];
}

/* The step a dropout node reads from its f32 step tensor: the integer part of a non-negative value
 * (exact below 2^24). */
PORTA_PHILOX_FUNCTION philox_u32 dropout_step(float step) { return (philox_u32)(philox_i64)step; }

/* Dropout keeps draw j where its bits reach `threshold`, the drop ratio's share of 2^32
 * (core/runtime/dropout.hpp), so the decision needs no float. Element i reads draw offset + i / span:
 * span 1 draws per element, a larger one shares a draw over that many consecutive elements (stochastic
 * depth: one per sample); the offset skips the draws of the samples before a batch's shard. */
PORTA_PHILOX_FUNCTION int dropout_keeps(philox_u64 seed, philox_u32 step, philox_u64 j, philox_u32 threshold) {
  return philox_bits(seed, step, j) >= threshold;
}

/* Dropout's decisions for consecutive elements, each Philox block drawn once for its four draws:
 * dropout_start at element `first`, then dropout_cursor_keeps and dropout_advance per element. The
 * same bits as dropout_keeps(seed, step, offset + i / span, threshold), in a quarter of the work at
 * span 1. */
typedef struct {
  philox_u64 seed, span, draw, within; /* element i is `within` elements into the span of `draw` */
  philox_u32 step, threshold;
  philox_u32 words[4]; /* block draw / 4 */
} DropoutCursor;

PORTA_PHILOX_FUNCTION void dropout_start(DropoutCursor* c, philox_u64 seed, philox_u32 step, philox_u32 threshold,
                                         philox_u64 span, philox_u64 offset, philox_u64 first) {
  c->seed = seed;
  c->step = step;
  c->threshold = threshold;
  c->span = span;
  c->draw = offset + (span == 1u ? first : first / span);
  c->within = span == 1u ? 0u : first % span;
  philox_block(seed, step, c->draw >> 2, c->words);
}

PORTA_PHILOX_FUNCTION int dropout_cursor_keeps(const DropoutCursor* c) {
  return c->words[c->draw & 3u] >= c->threshold;
}

PORTA_PHILOX_FUNCTION void dropout_advance(DropoutCursor* c) {
  if (++c->within < c->span) return;
  c->within = 0u;
  if ((++c->draw & 3u) == 0u) philox_block(c->seed, c->step, c->draw >> 2, c->words);
}

#endif
