// The comparisons and logical ops, once for the host kernels (through core/runtime/op_math.hpp)
// and the GPU source (backends/gpu/ops/logic.cu).
#pragma once

#include "porta/ops.hpp"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define PORTA_LOGIC_MATH __host__ __device__ constexpr
#else
#define PORTA_LOGIC_MATH constexpr
#endif

namespace porta::detail {

// Whether `op` holds for a and b (a comparison of two values of one type).
template <class T>
PORTA_LOGIC_MATH bool compare(Comparison op, T a, T b) {
  switch (op) {
    case Comparison::Equal: return a == b;
    case Comparison::Less: return a < b;
    case Comparison::LessOrEqual: return a <= b;
    case Comparison::Greater: return a > b;
    case Comparison::GreaterOrEqual: return a >= b;
  }
  return false;
}

PORTA_LOGIC_MATH bool logical(LogicalOp op, bool a, bool b) {
  return op == LogicalOp::Not ? !a : op == LogicalOp::And ? (a && b) : (a || b);
}

}  // namespace porta::detail

#undef PORTA_LOGIC_MATH
