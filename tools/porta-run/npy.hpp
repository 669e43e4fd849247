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

}  // namespace porta::npy
