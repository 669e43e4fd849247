#pragma once
// ONNX models built inside tests: porta's protobuf writer (core/onnx/writer.hpp), plus the
// encodings other writers use that porta's exporter does not (unpacked dims, float_data).
#include <string>
#include <vector>

#include "core/onnx/writer.hpp"

namespace porta::test::onnx_writer {

using namespace porta::onnx::writer;

// TensorProto: f32 values as raw_data (or float_data when `raw` is false).
inline Proto tensor(const std::string& name, const std::vector<std::int64_t>& dims, const std::vector<float>& values,
                    bool raw = true) {
  Proto t;
  for (auto d : dims) t.varint(1, d);  // unpacked, as some writers do
  t.varint(2, FLOAT).string(8, name);
  if (raw)
    t.data(9, values.data(), values.size() * 4);
  else
    t.packed_floats(4, values);
  return t;
}

}  // namespace porta::test::onnx_writer
