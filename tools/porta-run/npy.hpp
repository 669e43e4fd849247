#pragma once
// NumPy .npy files (format 1.0-3.0): little-endian float32, float16, int64, int32 or bool arrays in C order.
// Every malformed file is a porta::Error naming the file and what is wrong with it.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "porta/dtype.hpp"
#include "porta/tensor.hpp"

namespace porta::npy {

struct Array {
  DType dtype = DType::f32;  // f32, f16, i64, i32 or bool
  Shape shape;               // empty for a 0-d array
  std::vector<std::byte> data;
};

// `what` names the source in errors (a file name). Throws InvalidArgument.
Array parse(std::span<const std::byte> bytes, const std::string& what);
std::vector<std::byte> serialize(const Array& array);  // format 1.0; bf16 is not representable

Array read(const std::filesystem::path& path);  // IoError if unreadable, else as parse
void write(const std::filesystem::path& path, const Array& array);

// A tensor's bytes as an array that .npy can hold: bf16, which .npy lacks, widens to float32 (exactly).
Array storable(DType dtype, Shape shape, std::vector<std::byte> bytes);
// The array's elements as the bytes of a tensor of `dtype`, never through a float where a value could
// change: as they are in the same dtype; exact between integer dtypes (InvalidArgument, naming `what`,
// for a value that `dtype` cannot hold); a float32 holding a bf16 (as storable widens it) gives back
// its bits, NaN payloads included; otherwise between float dtypes rounded to nearest even. Between a
// float and an integer dtype, a DTypeMismatch.
std::vector<std::byte> bytes_as(const Array& array, DType dtype, const std::string& what);

}  // namespace porta::npy
