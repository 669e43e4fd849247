#pragma once
// numpy arrays in and out of porta: dtypes, the stated conversions, and enum names as strings.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "porta/porta.hpp"

namespace porta::python {

namespace py = pybind11;

// bf16 arrays are ml_dtypes.bfloat16 where it is installed, else uint16 holding the bit patterns.
py::dtype numpy_dtype(DType t);
// The dtype a graph takes from a constant's array: float32 -> f32, float16 -> f16, bfloat16 -> bf16;
// anything else needs `requested` (uint16 only as bf16 bits, other floats converted to it).
DType dtype_of_array(const py::array& a, const std::string& requested);

// An array's bytes in `dtype` storage, and its shape. A C-contiguous array already in that dtype is
// read in place, without a copy; a strided one is made contiguous and a floating one of another
// dtype is converted (float64 input rounds once to the storage dtype). Integer arrays are refused.
struct Storage {
  py::array array;  // keeps the bytes alive
  std::span<const std::byte> bytes() const;
  Shape shape() const;
};
Storage storage_of(const py::handle& value, DType dtype, std::string_view what);

// A copy of `bytes` (storage dtype) as a new array of `shape`.
py::array array_of(const std::vector<std::byte>& bytes, const TensorDesc& desc);

// Enum values from their names, as to_string writes them (case-insensitive).
Activation parse_activation(std::string_view text);
Layout parse_layout(std::string_view text);
Reduction parse_reduction(std::string_view text);
Impl parse_impl(std::string_view text);

}  // namespace porta::python
