#pragma once
// W floats as one vector value, for the bodies compiled per instruction set with that set's own
// register width (vector_kernels.inc: a 64-byte vector under AVX2 lives on the stack).
// Specialised because GCC 12 drops vector_size on a type that depends on a template parameter.
#include <cstddef>
#include <utility>

namespace porta::detail {

template <int W> struct FloatVector;
template <> struct FloatVector<4> { using type = float __attribute__((vector_size(16))); };
template <> struct FloatVector<8> { using type = float __attribute__((vector_size(32))); };
template <> struct FloatVector<16> { using type = float __attribute__((vector_size(64))); };

template <int W> struct IntVector;
template <> struct IntVector<4> { using type = int __attribute__((vector_size(16))); };
template <> struct IntVector<8> { using type = int __attribute__((vector_size(32))); };
template <> struct IntVector<16> { using type = int __attribute__((vector_size(64))); };

// The shuffle mask that interleaves the lanes of two W-float vectors a and b from lane `From`
// on: a[From], b[From], a[From + 1], b[From + 1], ... (a member, not a function's result: a
// vector returned outside a target attribute changes the ABI, and GCC warns).
template <int W, int From, class Lanes = std::make_index_sequence<W>> struct InterleaveMask;
template <int W, int From, std::size_t... I> struct InterleaveMask<W, From, std::index_sequence<I...>> {
  static constexpr typename IntVector<W>::type value{static_cast<int>(From + I / 2 + (I % 2 == 0 ? 0 : W))...};
};

}  // namespace porta::detail
