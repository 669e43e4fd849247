#pragma once
// Values known at load time (initializers and Constant outputs), held on the host until an op reads
// them (Reshape's shape, Clip's bounds) or needs them as a graph constant.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/onnx/model.hpp"
#include "porta/dtype.hpp"
#include "porta/tensor.hpp"

namespace porta::onnx {

struct Literal {
  std::string name;
  Shape dims;  // ONNX dims: empty for a scalar
  bool is_float = true;
  // Float literals: the storage dtype of `bytes`. Integer ones: the dtype a graph constant of them
  // takes (boolean for bool, i32 for int32, else i64).
  DType dtype = DType::f32;
  // Float literals (f64 is narrowed to f32): a view of the model's bytes when they are already in
  // storage form, so that weights are copied once (into the graph), else of `owned`.
  std::span<const std::byte> bytes;
  std::vector<std::byte> owned;
  std::vector<std::int64_t> ints;  // integer and bool literals

  Literal() = default;
  Literal(Literal&&) = default;  // moving keeps `bytes` valid (the buffer moves along); copying would not
  Literal& operator=(Literal&&) = default;
  Literal(const Literal&) = delete;
  Literal& operator=(const Literal&) = delete;

  void own(std::vector<std::byte> data) {
    owned = std::move(data);
    bytes = owned;
  }
  std::int64_t numel() const;
  std::vector<float> floats() const;  // float literals as f32
};

// The bytes `t`'s raw_data must hold, from its dims and element type; nullopt where either is one
// decode_literal refuses.
std::optional<std::uint64_t> raw_byte_count(const TensorProto& t);

// Checks that the data matches the dims and element type; `what` names the tensor in errors. The
// result may view `t.raw_data`: it lives no longer than the bytes the model was decoded from.
Literal decode_literal(const TensorProto& t, const std::string& what);

}  // namespace porta::onnx
