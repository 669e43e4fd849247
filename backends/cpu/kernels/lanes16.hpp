#pragma once
// 16 floats as one vector value, for kernel bodies compiled per instruction set
// (vector_kernels.inc): a zmm register where the target has AVX-512, two ymm or four xmm elsewhere.
#include <cstdint>

#include "backends/cpu/kernels/float_vector.hpp"

namespace porta::detail {

inline constexpr std::int64_t lanes16 = 16;
using Lanes16 = FloatVector<lanes16>::type;

}  // namespace porta::detail
