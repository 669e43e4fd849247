#pragma once
// y = act(y) over a run, for the activations that need exp or erf (sigmoid, SiLU, tanh, GELU). They are
// bound by arithmetic, so they are compiled per instruction set (vector_kernels.hpp): the baseline
// build's SSE code ran SiLU four times slower than AVX2 and nine times slower than AVX-512 on Zen 5.
#include <cstdint>

#include "backends/cpu/kernels/vector_math.hpp"
#include "porta/graph.hpp"

namespace porta::detail {

using ActivationRunFn = void (*)(float* y, std::int64_t count);

// The widest version of `act` this CPU runs (vector_kernels.cpp): Sigmoid, Silu, Tanh or Gelu, else null.
ActivationRunFn activation_run(Activation act);

template <class F>
[[gnu::always_inline]] inline void activation_run_body(float* y, std::int64_t count, F f) {
  for (std::int64_t i = 0; i < count; ++i) y[i] = f(y[i]);
}

}  // namespace porta::detail
