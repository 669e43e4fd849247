#pragma once
// Tensor descriptions and the handle a Graph gives out for each tensor it holds.
#include <cstdint>
#include <string>
#include <vector>

#include "porta/dtype.hpp"

namespace porta {

using Shape = std::vector<std::int64_t>;

inline constexpr int max_rank = 8;

// Dense, row-major tensor description. Every tensor inside a graph is contiguous; strided
// views exist only at the boundary (graph inputs, see Graph::input).
struct TensorDesc {
  DType dtype = DType::f32;
  Shape shape;

  int rank() const noexcept { return static_cast<int>(shape.size()); }
  std::int64_t numel() const noexcept;
  std::size_t bytes() const noexcept { return static_cast<std::size_t>(numel()) * size_of(dtype); }
  friend bool operator==(const TensorDesc&, const TensorDesc&) = default;
};

// Variable: state kept on the device from run to run (Graph::variable).
enum class Role : std::uint8_t { Input, Constant, Intermediate, Variable };

// A handle to one tensor of one Graph. Default-constructed handles mean "no tensor".
struct Tensor {
  std::int32_t id = -1;
  explicit operator bool() const noexcept { return id >= 0; }
  friend bool operator==(Tensor, Tensor) = default;
};

std::string to_string(const Shape& shape);  // "[1, 3, 224, 224]"

// Row-major strides of a dense shape, in elements.
Shape contiguous_strides(const Shape& shape);

}  // namespace porta
