/* One step of attention's online softmax, in the C that OpenCL C, CUDA and HIP all compile:
 * backends/gpu/ops/attention.cu includes this file, and the OpenCL backend embeds it and puts it
 * before backends/opencl/kernels/attention.cl (backends/opencl/kernel_programs.cpp). */
#ifndef PORTA_ONLINE_SOFTMAX_H
#define PORTA_ONLINE_SOFTMAX_H

#ifdef __OPENCL_VERSION__
#define PORTA_KERNEL_FUNCTION /* as common.cl's functions: OpenCL C 1.2's inline is C99's */
#define PORTA_EXP exp
#elif defined(__CUDACC__) || defined(__HIPCC__)
#define PORTA_KERNEL_FUNCTION __device__ inline
#define PORTA_EXP expf
#else /* C++ on the host: the GPU emulation of the tests */
#include <cmath>
#define PORTA_KERNEL_FUNCTION inline
#define PORTA_EXP std::exp
#endif

/* Folds score s (finite) into a row's running maximum *top and sum *sum: where s raises the
 * maximum, the sum and the n partial outputs are first rescaled to it. Returns exp(s - *top), the
 * weight with which the caller adds s's value row to the outputs. */
PORTA_KERNEL_FUNCTION float online_softmax_step(float s, float* top, float* sum, float* out, long n) {
  if (s > *top) {
    const float rescale = PORTA_EXP(*top - s);
    *sum *= rescale;
    for (long c = 0; c < n; ++c) out[c] *= rescale;
    *top = s;
  }
  const float p = PORTA_EXP(s - *top);
  *sum += p;
  return p;
}

#endif
