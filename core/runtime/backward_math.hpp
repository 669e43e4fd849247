#pragma once
// The formulas of the backward ops, written once for every kernel source that can include C++: the
// host kernels (core/ref/backward.cpp in double, backends/cpu/ops/backward.cpp in float) and the CUDA
// and HIP source (backends/gpu/ops/backward.cu), which nvcc and hipcc compile for the device too.
// OpenCL C can include none of it (backends/opencl/kernels/backward.cl keeps its own copy, which the
// op cases check against ref).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "porta/ops.hpp"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define PORTA_HOST_DEVICE __host__ __device__
#else
#define PORTA_HOST_DEVICE
#endif

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

// f'(x) for ActivationBackward's forward activation; a and b are clip's min and max or hard_sigmoid's
// alpha and beta. At a kink the derivative is PyTorch's: relu'(0) = 0, clip and hard_sigmoid pass
// gradient only strictly inside their linear range, hard_swish takes the middle piece's slope on [-3, 3].
template <class T>
PORTA_HOST_DEVICE T activation_derivative(OpKind forward, T x, T a, T b, bool gelu_tanh) {
  switch (forward) {
    case OpKind::Relu: return x > T(0) ? T(1) : T(0);
    case OpKind::Clip: return x > a && x < b ? T(1) : T(0);
    case OpKind::HardSigmoid: {
      const T v = a * x + b;
      return v > T(0) && v < T(1) ? a : T(0);
    }
    case OpKind::HardSwish: return x < T(-3) ? T(0) : (x <= T(3) ? x / T(3) + T(0.5) : T(1));
    case OpKind::Gelu: {
      if (gelu_tanh) {
        const T c = T(0.79788456080286535588), k = T(0.044715);  // sqrt(2 / pi)
        const T t = math::tanh(c * (x + k * x * x * x));
        return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * c * (T(1) + T(3) * k * x * x);
      }
      const T cdf = T(0.5) * (T(1) + math::erf(x * T(0.70710678118654752440)));  // 1 / sqrt(2)
      return cdf + x * math::exp(T(-0.5) * x * x) * T(0.39894228040143267794);   // 1 / sqrt(2 pi)
    }
    default: return T(0);  // the builder admits no other
  }
}

// Where max pooling's window (oh, ow) of one channel plane of h x w finds its first maximum in
// row-major window order (PyTorch's choice among ties): the input (h, w), or h = -1 where the
// window covers no input element. `window` has kernel, stride, pad (top and left first) and
// dilation, each indexed by 0 and 1 (Pool2dParams, gpu::PoolArgs); value(h, w) loads the element.
struct WindowPosition {
  std::int64_t h = -1, w = -1;
};
template <class Window, class Value>
PORTA_HOST_DEVICE WindowPosition window_argmax(const Window& window, std::int64_t h, std::int64_t w, std::int64_t oh,
                                               std::int64_t ow, Value value) {
  WindowPosition best;
  std::decay_t<decltype(value(oh, ow))> best_value{};
  const std::int64_t h0 = oh * window.stride[0] - window.pad[0], w0 = ow * window.stride[1] - window.pad[1];
  for (std::int64_t i = 0; i < window.kernel[0]; ++i) {
    const std::int64_t ih = h0 + i * window.dilation[0];
    if (ih < 0 || ih >= h) continue;
    for (std::int64_t j = 0; j < window.kernel[1]; ++j) {
      const std::int64_t iw = w0 + j * window.dilation[1];
      if (iw < 0 || iw >= w) continue;
      const auto v = value(ih, iw);
      if (best.h < 0 || v > best_value) best = {ih, iw}, best_value = v;
    }
  }
  return best;
}

// log(sum_c exp(z_c)) of one row of `classes` (at least one), the maximum taken out first to keep exp
// in range. z(c) loads the row's elements; T is the precision of the sums.
template <class T, class Z>
PORTA_HOST_DEVICE T log_sum_exp_row(std::int64_t classes, Z z) {
  T top = z(0);
  for (std::int64_t c = 1; c < classes; ++c) top = T(z(c)) > top ? T(z(c)) : top;
  T sum = 0;
  for (std::int64_t c = 0; c < classes; ++c) sum += math::exp(T(z(c)) - top);
  return top + math::log(sum);
}

// Softmax cross-entropy of one row of `classes` (at least one): sum_c l_c (logsumexp(z) - z_c). Each
// term is a non-negative -log softmax, so nothing cancels. z(c) and l(c) load the row's elements.
template <class T, class Z, class L>
PORTA_HOST_DEVICE T cross_entropy_row(std::int64_t classes, Z z, L l) {
  const T lse = log_sum_exp_row<T>(classes, z);
  T total = 0;
  for (std::int64_t c = 0; c < classes; ++c) total += T(l(c)) * (lse - T(z(c)));
  return total;
}

// The class an integer label names among `classes`: a negative one counts from the end, as gather's
// indices do. The label is in [-classes, classes): the kernels' callers check that first.
PORTA_HOST_DEVICE inline std::int64_t label_class(std::int64_t label, std::int64_t classes) {
  return label < 0 ? label + classes : label;
}

// The same against a class index (in [0, classes)): logsumexp(z) - z[label], what the one-hot row's
// sum gives, read from one element instead of a row of labels.
template <class T, class Z>
PORTA_HOST_DEVICE T cross_entropy_index_row(std::int64_t classes, Z z, std::int64_t label) {
  return log_sum_exp_row<T>(classes, z) - T(z(label));
}

// The gradient of cross_entropy_index_row with respect to the row's logits, times dy: calls
// out(c, dy (softmax(z)_c - [c == label])) for every class c in order.
template <class T, class Z, class Out>
PORTA_HOST_DEVICE void cross_entropy_index_grad_row(std::int64_t classes, Z z, std::int64_t label, T dy, Out out) {
  T top = z(0);
  for (std::int64_t c = 1; c < classes; ++c) top = T(z(c)) > top ? T(z(c)) : top;
  T sum = 0;
  for (std::int64_t c = 0; c < classes; ++c) sum += math::exp(T(z(c)) - top);
  for (std::int64_t c = 0; c < classes; ++c)
    out(c, dy * (math::exp(T(z(c)) - top) / sum - (c == label ? T(1) : T(0))));
}

}  // namespace porta::detail
