#pragma once
// Protobuf wire format, written: the few ONNX messages porta emits (field numbers from onnx.proto).
// Used by the exporter (export.cpp) and by the tests that build models byte by byte.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace porta::onnx::writer {

struct Proto {
  std::vector<std::uint8_t> bytes;

  void raw_varint(std::uint64_t v) {
    do {
      bytes.push_back(static_cast<std::uint8_t>((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
      v >>= 7;
    } while (v);
  }
  Proto& varint(std::uint32_t field, std::int64_t v) {
    raw_varint(std::uint64_t{field} << 3);
    raw_varint(static_cast<std::uint64_t>(v));
    return *this;
  }
  Proto& fixed32(std::uint32_t field, float v) {
    raw_varint(std::uint64_t{field} << 3 | 5);
    std::uint8_t b[4];
    std::memcpy(b, &v, 4);
    bytes.insert(bytes.end(), b, b + 4);
    return *this;
  }
  Proto& data(std::uint32_t field, const void* p, std::size_t n) {
    raw_varint(std::uint64_t{field} << 3 | 2);
    raw_varint(n);
    const auto* b = static_cast<const std::uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
    return *this;
  }
  Proto& string(std::uint32_t field, const std::string& s) { return data(field, s.data(), s.size()); }
  Proto& message(std::uint32_t field, const Proto& m) { return data(field, m.bytes.data(), m.bytes.size()); }
  Proto& packed_ints(std::uint32_t field, const std::vector<std::int64_t>& vs) {
    Proto inner;
    for (auto v : vs) inner.raw_varint(static_cast<std::uint64_t>(v));
    return message(field, inner);
  }
  Proto& packed_floats(std::uint32_t field, const std::vector<float>& vs) {
    return data(field, vs.data(), vs.size() * sizeof(float));
  }
};

// TensorProto.DataType
enum : std::int32_t { FLOAT = 1, INT32 = 6, INT64 = 7, BOOL = 9, FLOAT16 = 10, BFLOAT16 = 16 };

// TensorProto with its values as raw little-endian bytes.
inline Proto raw_tensor(const std::string& name, const std::vector<std::int64_t>& dims, std::int32_t elem,
                        const void* data, std::size_t size) {
  Proto t;
  t.packed_ints(1, dims).varint(2, elem).string(8, name).data(9, data, size);
  return t;
}
inline Proto int64_tensor(const std::string& name, const std::vector<std::int64_t>& values) {
  Proto t;
  t.packed_ints(1, {static_cast<std::int64_t>(values.size())}).varint(2, INT64).string(8, name).packed_ints(7, values);
  return t;
}

inline Proto attr_int(const std::string& name, std::int64_t v) {
  Proto a;
  a.string(1, name).varint(20, 2).varint(3, v);
  return a;
}
inline Proto attr_float(const std::string& name, float v) {
  Proto a;
  a.string(1, name).varint(20, 1).fixed32(2, v);
  return a;
}
inline Proto attr_string(const std::string& name, const std::string& v) {
  Proto a;
  a.string(1, name).varint(20, 3).string(4, v);
  return a;
}
inline Proto attr_ints(const std::string& name, const std::vector<std::int64_t>& v) {
  Proto a;
  a.string(1, name).varint(20, 7).packed_ints(8, v);
  return a;
}
inline Proto attr_tensor(const std::string& name, const Proto& t) {
  Proto a;
  a.string(1, name).varint(20, 4).message(5, t);
  return a;
}

inline Proto node(const std::string& op, const std::vector<std::string>& inputs,
                  const std::vector<std::string>& outputs, const std::string& name = {},
                  const std::vector<Proto>& attrs = {}, const std::string& domain = {}) {
  Proto n;
  for (const auto& i : inputs) n.string(1, i);
  for (const auto& o : outputs) n.string(2, o);
  if (!name.empty()) n.string(3, name);
  n.string(4, op);
  for (const auto& a : attrs) n.message(5, a);
  if (!domain.empty()) n.string(7, domain);
  return n;
}

// ValueInfoProto; a dimension of -1 is written as the symbol "batch".
inline Proto value_info(const std::string& name, const std::vector<std::int64_t>& dims, std::int32_t elem = FLOAT) {
  Proto shape;
  for (auto d : dims) {
    Proto dim;
    if (d < 0)
      dim.string(2, "batch");
    else
      dim.varint(1, d);
    shape.message(1, dim);
  }
  Proto tensor_type;
  tensor_type.varint(1, elem).message(2, shape);
  Proto type;
  type.message(1, tensor_type);
  Proto v;
  v.string(1, name).message(2, type);
  return v;
}

struct Model {
  std::vector<Proto> nodes, initializers, inputs, outputs;
  std::int64_t opset = 13;
  std::string producer = "porta", graph_name = "porta";

  // The graph goes last, so that every strict prefix of the bytes lacks it or cuts it.
  std::vector<std::byte> bytes() const {
    Proto g;
    for (const auto& n : nodes) g.message(1, n);
    g.string(2, graph_name);
    for (const auto& t : initializers) g.message(5, t);
    for (const auto& i : inputs) g.message(11, i);
    for (const auto& o : outputs) g.message(12, o);
    Proto opset_id;
    opset_id.string(1, "").varint(2, opset);
    Proto m;
    m.varint(1, 8).string(2, producer).message(8, opset_id).message(7, g);
    const auto* p = reinterpret_cast<const std::byte*>(m.bytes.data());
    return {p, p + m.bytes.size()};
  }
};

}  // namespace porta::onnx::writer
