#pragma once
// W floats as one vector value, for the bodies compiled per instruction set with that set's own
// register width (vector_kernels.inc: a 64-byte vector under AVX2 lives on the stack).
// Specialised because GCC 12 drops vector_size on a type that depends on a template parameter.
namespace porta::detail {

template <int W> struct FloatVector;
template <> struct FloatVector<4> { using type = float __attribute__((vector_size(16))); };
template <> struct FloatVector<8> { using type = float __attribute__((vector_size(32))); };
template <> struct FloatVector<16> { using type = float __attribute__((vector_size(64))); };

}  // namespace porta::detail
