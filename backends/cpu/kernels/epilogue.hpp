#pragma once
// The fused epilogue of GEMM and convolution outputs: y = act(src + bias (+ residual)), one run of
// contiguous outputs at a time. The activation is chosen outside the loop, so the cheap ones
// vectorise.
#include <cstdint>

#include "core/runtime/op_math.hpp"

namespace porta::detail {

template <class Act>
inline void bias_activate_with(float* y, const float* src, const float* residual, std::int64_t count, float bias,
                               const Act& act) {
  if (residual) {
    for (std::int64_t i = 0; i < count; ++i) y[i] = act(src[i] + bias + residual[i]);
  } else {
    for (std::int64_t i = 0; i < count; ++i) y[i] = act(src[i] + bias);
  }
}

// `src` may be `y` itself; `residual` may be null.
inline void bias_activate(float* y, const float* src, const float* residual, std::int64_t count, float bias,
                          Activation act) {
  switch (act) {
    case Activation::None: return bias_activate_with(y, src, residual, count, bias, [](float v) { return v; });
    case Activation::Relu:
      return bias_activate_with(y, src, residual, count, bias, [](float v) { return v > 0.0f ? v : 0.0f; });
    case Activation::Relu6:
      return bias_activate_with(y, src, residual, count, bias, [](float v) { return clip(v, 0.0f, 6.0f); });
    default:
      return bias_activate_with(y, src, residual, count, bias, [act](float v) { return activate(act, v); });
  }
}

}  // namespace porta::detail
