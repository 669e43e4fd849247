#pragma once
// The fused epilogue of GEMM and convolution outputs: y = act(src + bias (+ residual)), one run of
// contiguous outputs at a time. The activation is chosen outside the loop, so that the cheap ones
// vectorise. Code compiled for the baseline runs sigmoid, SiLU, tanh and GELU as a second pass
// over the run, in the widest instruction set; the
// channels-last form is compiled per instruction set (vector_kernels.hpp) and runs them in the
// same pass. Always inline, so that it vectorises for the set of whichever kernel includes it.
#include <cstdint>

#include "backends/cpu/kernels/activation_run.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

template <class Bias, class Act>
[[gnu::always_inline]] inline void epilogue_run(float* y, const float* src, const float* residual,
                                                std::int64_t count, const Bias& bias, const Act& act) {
  if (residual) {
    for (std::int64_t i = 0; i < count; ++i) y[i] = act(src[i] + bias(i) + residual[i]);
  } else {
    for (std::int64_t i = 0; i < count; ++i) y[i] = act(src[i] + bias(i));
  }
}

// `PerIsa`: the caller is compiled per instruction set, and sigmoid, SiLU, tanh and GELU vectorise in it.
template <class Bias, bool PerIsa = false>
[[gnu::always_inline]] inline void epilogue(float* y, const float* src, const float* residual, std::int64_t count,
                                            const Bias& bias, Activation act) {
  if constexpr (PerIsa) {
    if (act == Activation::Sigmoid) return epilogue_run(y, src, residual, count, bias, SigmoidRun{});
    if (act == Activation::Silu) return epilogue_run(y, src, residual, count, bias, SiluRun{});
    if (act == Activation::Tanh) return epilogue_run(y, src, residual, count, bias, TanhRun{});
    if (act == Activation::Gelu) return epilogue_run(y, src, residual, count, bias, GeluRun{});
  }
  switch (act) {
    case Activation::None: return epilogue_run(y, src, residual, count, bias, [](float v) { return v; });
    case Activation::Relu:
      return epilogue_run(y, src, residual, count, bias, [](float v) { return v > 0.0f ? v : 0.0f; });
    case Activation::Relu6:
      return epilogue_run(y, src, residual, count, bias, [](float v) { return clip(v, 0.0f, 6.0f); });
    case Activation::Sigmoid:
    case Activation::Silu:
    case Activation::Tanh:
    case Activation::Gelu:
      epilogue_run(y, src, residual, count, bias, [](float v) { return v; });
      return activation_run(act)(y, count);
  }
}

// A run of one filter's outputs (NCHW): one bias for all. `src` may be `y` itself; `residual`
// may be null.
[[gnu::always_inline]] inline void bias_activate(float* y, const float* src, const float* residual,
                                                 std::int64_t count, float bias, Activation act) {
  epilogue(y, src, residual, count, [bias](std::int64_t) { return bias; }, act);
}

// A run along the channels of one pixel (NHWC): a bias per element. `bias` and `residual` may be
// null; `src` may be `y` itself. Callers take it from vector_kernels().
using BiasActivateChannelsFn = void (*)(float* y, const float* src, const float* residual, std::int64_t count,
                                        const float* bias, Activation act);
[[gnu::always_inline]] inline void bias_activate_channels_body(float* y, const float* src, const float* residual,
                                                               std::int64_t count, const float* bias, Activation act) {
  const auto no_bias = [](std::int64_t) { return 0.0f; };
  if (bias == nullptr) return epilogue<decltype(no_bias), true>(y, src, residual, count, no_bias, act);
  const auto per_channel = [bias](std::int64_t i) { return bias[i]; };
  epilogue<decltype(per_channel), true>(y, src, residual, count, per_channel, act);
}

// The same over `pixels` pixels `ld` floats apart, of `channels` each, in place (the same bias
// for each pixel); `residual` laid out like y. One call per row of pixels: a call per pixel, for
// a depthwise layer's 32 channels, took a third of its time.
using BiasActivatePixelsFn = void (*)(float* y, const float* residual, std::int64_t pixels, std::int64_t channels,
                                      std::int64_t ld, const float* bias, Activation act);
[[gnu::always_inline]] inline void bias_activate_pixels_body(float* y, const float* residual, std::int64_t pixels,
                                                             std::int64_t channels, std::int64_t ld, const float* bias,
                                                             Activation act) {
  if (!bias && !residual && act == Activation::None) return;
  if (!bias && !residual && ld == channels)  // one run
    return bias_activate_channels_body(y, y, nullptr, pixels * channels, nullptr, act);
  for (std::int64_t p = 0; p < pixels; ++p)
    bias_activate_channels_body(y + p * ld, y + p * ld, residual ? residual + p * ld : nullptr, channels, bias, act);
}

}  // namespace porta::detail
