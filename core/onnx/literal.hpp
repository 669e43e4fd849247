#pragma once
// Values known at load time (initializers and Constant outputs), held on the host until an op reads
// them (Reshape's shape, Clip's bounds) or needs them as a graph constant.
#include <cstdint>
#include <string>
#include <vector>

#include "core/onnx/model.hpp"
#include "porta/dtype.hpp"
#include "porta/tensor.hpp"

namespace porta::onnx {

struct Literal {
  std::string name;
  Shape dims;                      // ONNX dims: empty for a scalar
  bool is_float = true;
  DType dtype = DType::f32;        // float literals: the storage dtype of `bytes`
  std::vector<std::byte> bytes;    // float literals (f64 is narrowed to f32)
  std::vector<std::int64_t> ints;  // integer and bool literals

  std::int64_t numel() const;
  std::vector<float> floats() const;  // float literals as f32
};

// Checks that the data matches the dims and element type; `what` names the tensor in errors.
Literal decode_literal(const TensorProto& t, const std::string& what);

}  // namespace porta::onnx
