#pragma once
// 16 floats as one vector value, for kernel bodies compiled per instruction set
// (vector_kernels.inc): a zmm register where the target has AVX-512, two ymm or four xmm elsewhere.
#include <cstdint>

#include "backends/cpu/kernels/float_vector.hpp"

namespace porta::detail {

inline constexpr std::int64_t lanes16 = 16;
using Lanes16 = FloatVector<lanes16>::type;

// Through references: passing the vector by value would change the ABI between the instruction
// sets these bodies are compiled for (-Wpsabi), though they are always inlined.
[[gnu::always_inline]] inline void load_lanes(Lanes16& v, const float* p) { __builtin_memcpy(&v, p, sizeof v); }
[[gnu::always_inline]] inline void store_lanes(float* p, const Lanes16& v) { __builtin_memcpy(p, &v, sizeof v); }

}  // namespace porta::detail
