// The FMA probe (Device::measure_fma_gflops): each work item runs FMA_CHAINS independent chains
// of FMA_WIDTH lanes, acc = fma(acc, scale, shift) on registers, with fma() as the GEMM kernels
// multiply-add. Lane l of chain i is scalar chain i * FMA_WIDTH + l and starts there; the work
// item writes the sum of its scalar chains, so that no step is optimized away. A CPU device runs
// vectors of its SIMD width, a GPU scalars (its work items are its lanes). On 2 Zen 1 cores PoCL
// ran scalar chains at 12 GFLOP/s, 32 with the loop over chains unrolled (they stay in registers;
// in a loop PoCL kept them in memory), and unrolled vectors of 8 at 78-80, the cpu device's rate.
#define PASTE(a, b) a##b
#define WITH_WIDTH(name, width) PASTE(name, width)
#if FMA_WIDTH == 1
typedef float lanes;
#define load_lanes(p) (*(p))
#define store_lanes(v, p) (*(p) = (v))
#else
typedef WITH_WIDTH(float, FMA_WIDTH) lanes;
#define load_lanes(p) WITH_WIDTH(vload, FMA_WIDTH)(0, p)
#define store_lanes(v, p) WITH_WIDTH(vstore, FMA_WIDTH)(v, 0, p)
#endif

__kernel void multiply_add_chains(__global float* sums, long steps, float scale, float shift) {
  lanes acc[FMA_CHAINS];
  float values[FMA_WIDTH];
  for (int i = 0; i < FMA_CHAINS; ++i) {
    for (int l = 0; l < FMA_WIDTH; ++l) values[l] = (float)(i * FMA_WIDTH + l);
    acc[i] = load_lanes(values);
  }
  const lanes s = (lanes)(scale), t = (lanes)(shift);
  for (long step = 0; step < steps; ++step)
#pragma unroll
    for (int i = 0; i < FMA_CHAINS; ++i) acc[i] = fma(acc[i], s, t);
  float sum = 0.0f;
  for (int i = 0; i < FMA_CHAINS; ++i) {
    store_lanes(acc[i], values);
    for (int l = 0; l < FMA_WIDTH; ++l) sum += values[l];
  }
  sums[get_global_id(0)] = sum;
}
