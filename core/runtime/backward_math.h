/* The formulas of the backward ops, written once in the C that C++, CUDA, HIP and OpenCL C all compile:
 * the host kernels (core/ref/backward.cpp in double, backends/cpu/ops/backward.cpp in float) include it
 * through core/runtime/op_math.hpp, backends/gpu/ops/backward.cu includes it, and the OpenCL backend
 * embeds it and puts it before backends/opencl/kernels/backward.cl (backends/opencl/kernel_programs.cpp).
 *
 * A few macros stand for what the languages do differently. In C++ each formula is a template over
 * porta_real, the precision of its arithmetic (float unless the caller names another), and over its
 * readers (`auto` parameters): callables that load an operand's element at the coordinates they are
 * given. OpenCL C has no templates: there porta_real is float and a reader points into a tensor, whose
 * elements common.cl's load_value loads. */
#ifndef PORTA_BACKWARD_MATH_H
#define PORTA_BACKWARD_MATH_H

#ifdef __OPENCL_VERSION__
typedef float porta_real;
/* A pooling window as porta::Pool2dParams holds it (pad: top, left), but for `kernel`, which is a keyword
 * of OpenCL C. */
typedef struct {
  long size[2], stride[2], pad[2], dilation[2];
} PoolWindow;
/* A convolution's geometry as porta::Conv2dParams holds it (pad: top, left first). */
typedef struct {
  long stride[2], pad[2], dilation[2];
} ConvWindow;
#define PORTA_FORMULA /* as common.cl's functions: OpenCL C 1.2's inline is C99's */
#define PORTA_WINDOW PoolWindow
#define PORTA_CONV_WINDOW ConvWindow
#define PORTA_WINDOW_SIZE(window, d) window.size[d]
#define PORTA_READER __global const storage_t*
#define PORTA_READ(reader, i) load_value(reader, i)
#define PORTA_READ_2D(reader, row, column, width) load_value(reader, (row) * (width) + (column))
#define PORTA_MATH(function) function /* overloaded for float */
#define PORTA_NESTED(formula) formula
#else
#include <cmath>
#if defined(__CUDACC__) || defined(__HIPCC__)
#define PORTA_HOST_DEVICE __host__ __device__
#else
#define PORTA_HOST_DEVICE
#endif
#define PORTA_FORMULA template <class porta_real = float> PORTA_HOST_DEVICE inline
#define PORTA_WINDOW const auto& /* Pool2dParams, gpu::PoolArgs */
#define PORTA_CONV_WINDOW const auto& /* Conv2dParams, gpu::DepthwiseGradientArgs */
#define PORTA_WINDOW_SIZE(window, d) window.kernel[d]
#define PORTA_READER auto
#define PORTA_READ(reader, i) reader(i)
#define PORTA_READ_2D(reader, row, column, width) reader(row, column)
#define PORTA_MATH(function) math::function
#define PORTA_NESTED(formula) formula<porta_real> /* another formula, at this one's precision */

namespace porta::detail {

// exp, log, tanh and erf of float and double through the C functions, which the device has too.
namespace math {
PORTA_HOST_DEVICE inline float exp(float x) { return ::expf(x); }
PORTA_HOST_DEVICE inline double exp(double x) { return ::exp(x); }
PORTA_HOST_DEVICE inline float log(float x) { return ::logf(x); }
PORTA_HOST_DEVICE inline double log(double x) { return ::log(x); }
PORTA_HOST_DEVICE inline float tanh(float x) { return ::tanhf(x); }
PORTA_HOST_DEVICE inline double tanh(double x) { return ::tanh(x); }
PORTA_HOST_DEVICE inline float erf(float x) { return ::erff(x); }
PORTA_HOST_DEVICE inline double erf(double x) { return ::erf(x); }
}  // namespace math
#endif

/* ActivationBackward's forward activation as activation_derivative takes it: `kind`, one of GRAD_*;
 * a and b, clip's min and max or hard_sigmoid's alpha and beta; gelu_tanh, whether gelu is the tanh form. */
enum { GRAD_RELU, GRAD_CLIP, GRAD_GELU, GRAD_HARD_SIGMOID, GRAD_HARD_SWISH };
typedef struct ActivationGradient {
  int kind;
  float a, b;
  int gelu_tanh;
} ActivationGradient;

/* f'(x) for the forward activation f. At a kink the derivative is PyTorch's: relu'(0) = 0, clip and
 * hard_sigmoid pass gradient only strictly inside their linear range, hard_swish takes the middle
 * piece's slope on [-3, 3]. */
PORTA_FORMULA porta_real activation_derivative(ActivationGradient f, porta_real x) {
  const porta_real a = f.a, b = f.b;
  switch (f.kind) {
    case GRAD_RELU: return x > 0 ? 1 : 0;
    case GRAD_CLIP: return x > a && x < b ? 1 : 0;
    case GRAD_HARD_SIGMOID: {
      const porta_real v = a * x + b;
      return v > 0 && v < 1 ? a : 0;
    }
    case GRAD_HARD_SWISH: return x < -3 ? 0 : (x <= 3 ? x / 3 + (porta_real)0.5 : 1);
    case GRAD_GELU: {
      if (f.gelu_tanh) {
        const porta_real c = (porta_real)0.79788456080286535588, k = (porta_real)0.044715; /* sqrt(2 / pi) */
        const porta_real t = PORTA_MATH(tanh)(c * (x + k * x * x * x));
        return (porta_real)0.5 * (1 + t) + (porta_real)0.5 * x * (1 - t * t) * c * (1 + 3 * k * x * x);
      }
      /* x / sqrt(2) for erf; the normal density is exp(-x^2 / 2) / sqrt(2 pi) */
      const porta_real cdf = (porta_real)0.5 * (1 + PORTA_MATH(erf)(x * (porta_real)0.70710678118654752440));
      return cdf + x * PORTA_MATH(exp)((porta_real)-0.5 * x * x) * (porta_real)0.39894228040143267794;
    }
    default: return 0; /* the builder admits no other */
  }
}

/* Where max pooling's window (oh, ow) of one channel plane of h x w finds its first maximum in
 * row-major window order (PyTorch's choice among ties): the input (h, w), or h = -1 where the window
 * covers no input element. x reads the plane at (h, w). */
typedef struct WindowPosition {
  long h, w;
} WindowPosition;
PORTA_FORMULA WindowPosition window_argmax(PORTA_WINDOW window, long h, long w, long oh, long ow, PORTA_READER x) {
  WindowPosition best = {-1, -1};
  porta_real best_value = 0;
  const long h0 = oh * window.stride[0] - window.pad[0], w0 = ow * window.stride[1] - window.pad[1];
  for (long i = 0; i < PORTA_WINDOW_SIZE(window, 0); ++i) {
    const long ih = h0 + i * window.dilation[0];
    if (ih < 0 || ih >= h) continue;
    for (long j = 0; j < PORTA_WINDOW_SIZE(window, 1); ++j) {
      const long iw = w0 + j * window.dilation[1];
      if (iw < 0 || iw >= w) continue;
      const porta_real v = PORTA_READ_2D(x, ih, iw, w);
      if (best.h < 0 || v > best_value) best.h = ih, best.w = iw, best_value = v;
    }
  }
  return best;
}

/* Max pooling's gradient at input (ih, iw) of a plane of h x w with an output of p x q: the sum of dy
 * over the windows that took their maximum there. x and dy read the plane's input and output gradient
 * at (row, column). A kernel that gathers so, a thread per input element, needs no atomics and adds in
 * the same order everywhere. */
PORTA_FORMULA porta_real max_pool_input_gradient(PORTA_WINDOW window, long h, long w, long p, long q, long ih,
                                                 long iw, PORTA_READER x, PORTA_READER dy) {
  porta_real sum = 0;
  for (long r = 0; r < PORTA_WINDOW_SIZE(window, 0); ++r) {
    const long rows = ih + window.pad[0] - r * window.dilation[0]; /* oh * stride for the window whose tap r is ih */
    if (rows < 0 || rows % window.stride[0] != 0 || rows / window.stride[0] >= p) continue;
    for (long s = 0; s < PORTA_WINDOW_SIZE(window, 1); ++s) {
      const long cols = iw + window.pad[1] - s * window.dilation[1];
      if (cols < 0 || cols % window.stride[1] != 0 || cols / window.stride[1] >= q) continue;
      const long oh = rows / window.stride[0], ow = cols / window.stride[1];
      const WindowPosition m = window_argmax(window, h, w, oh, ow, x);
      if (m.h == ih && m.w == iw) sum += PORTA_READ_2D(dy, oh, ow, q);
    }
  }
  return sum;
}

/* A depthwise convolution's filter gradient at tap (r, s) from one image's plane of one channel: dy
 * times the input the tap read, summed over the p x q outputs in row-major order (the padding reads
 * zero). x reads the h x w input plane, dy the p x q output gradient plane, at (row, column). */
PORTA_FORMULA porta_real depthwise_tap_gradient(PORTA_CONV_WINDOW window, long h, long w, long p, long q, long r,
                                                long s, PORTA_READER x, PORTA_READER dy) {
  porta_real sum = 0;
  for (long oh = 0; oh < p; ++oh) {
    const long ih = oh * window.stride[0] + r * window.dilation[0] - window.pad[0];
    if (ih < 0 || ih >= h) continue;
    for (long ow = 0; ow < q; ++ow) {
      const long iw = ow * window.stride[1] + s * window.dilation[1] - window.pad[1];
      if (iw < 0 || iw >= w) continue;
      sum += (porta_real)PORTA_READ_2D(x, ih, iw, w) * (porta_real)PORTA_READ_2D(dy, oh, ow, q);
    }
  }
  return sum;
}

/* The largest of a row's `classes` values (at least one): softmax takes it out first to keep exp in
 * range. z reads the row at c. */
PORTA_FORMULA porta_real row_max(long classes, PORTA_READER z) {
  porta_real top = PORTA_READ(z, 0);
  for (long c = 1; c < classes; ++c) {
    const porta_real v = PORTA_READ(z, c);
    top = v > top ? v : top;
  }
  return top;
}

/* Softmax's denominator over a row whose maximum is top: sum_c exp(z_c - top). */
PORTA_FORMULA porta_real exp_sum_row(long classes, PORTA_READER z, porta_real top) {
  porta_real sum = 0;
  for (long c = 0; c < classes; ++c) sum += PORTA_MATH(exp)(PORTA_READ(z, c) - top);
  return sum;
}

/* log(sum_c exp(z_c)) of a row, without overflow. */
PORTA_FORMULA porta_real log_sum_exp_row(long classes, PORTA_READER z) {
  const porta_real top = PORTA_NESTED(row_max)(classes, z);
  return top + PORTA_MATH(log)(PORTA_NESTED(exp_sum_row)(classes, z, top));
}

/* Softmax cross-entropy of one row of `classes` (at least one): sum_c l_c (logsumexp(z) - z_c). Each term
 * is a non-negative -log softmax, so nothing cancels. z and labels read the row at c. */
PORTA_FORMULA porta_real cross_entropy_row(long classes, PORTA_READER z, PORTA_READER labels) {
  const porta_real lse = PORTA_NESTED(log_sum_exp_row)(classes, z);
  porta_real total = 0;
  for (long c = 0; c < classes; ++c) total += PORTA_READ(labels, c) * (lse - PORTA_READ(z, c));
  return total;
}

/* The same against a class index in [0, classes) (an integer label, checked by the caller):
 * logsumexp(z) - z[label], what a one-hot row of labels gives, read from one element. */
PORTA_FORMULA porta_real cross_entropy_index_row(long classes, PORTA_READER z, long label) {
  return PORTA_NESTED(log_sum_exp_row)(classes, z) - PORTA_READ(z, label);
}

/* Its gradient at one logit z_c of a row whose maximum is top and exp_sum_row sum, times the row's dy:
 * dy (softmax(z)_c - [c is the label's class]). */
PORTA_FORMULA porta_real cross_entropy_index_gradient(porta_real z_c, porta_real top, porta_real sum, int hot,
                                                      porta_real dy) {
  return dy * (PORTA_MATH(exp)(z_c - top) / sum - (hot ? 1 : 0));
}

#ifndef __OPENCL_VERSION__
}  // namespace porta::detail
#endif
#undef PORTA_FORMULA
#undef PORTA_WINDOW
#undef PORTA_WINDOW_SIZE
#undef PORTA_READER
#undef PORTA_READ
#undef PORTA_READ_2D
#undef PORTA_MATH
#undef PORTA_NESTED
#undef PORTA_HOST_DEVICE
#endif
