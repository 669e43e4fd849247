#pragma once
// The part of ONNX's ModelProto that the importer reads, decoded from protobuf bytes. Tensor bytes
// stay views into the caller's buffer; everything else is copied out.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace porta::onnx {

// TensorProto.DataType values the importer knows by name.
enum class ElemType : std::int32_t {
  Undefined = 0,
  Float = 1,
  Uint8 = 2,
  Int8 = 3,
  Uint16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  Uint32 = 12,
  Uint64 = 13,
  BFloat16 = 16,
};

std::string elem_type_name(std::int32_t type);

struct TensorProto {
  std::string name;
  std::vector<std::int64_t> dims;
  std::int32_t data_type = 0;
  std::span<const std::uint8_t> raw_data;
  bool has_raw_data = false;
  std::vector<float> float_data;
  std::vector<std::int64_t> int_data;  // int32_data, int64_data and uint64_data
  std::vector<double> double_data;
  bool external = false;  // data_location EXTERNAL or external_data present
  // external_data's entries (location, offset, length, checksum), in the file's order.
  std::vector<std::pair<std::string, std::string>> external_data;
  bool has_strings = false;
  std::size_t offset = 0;  // byte offset of the message, for errors
};

enum class AttrType : std::int32_t {
  Undefined = 0,
  Float = 1,
  Int = 2,
  String = 3,
  Tensor = 4,
  Graph = 5,
  Floats = 6,
  Ints = 7,
  Strings = 8,
};

struct Attribute {
  std::string name;
  std::int32_t type = 0;  // as declared; 0 when an old writer left it out
  float f = 0.0f;
  std::int64_t i = 0;
  std::string s;
  std::optional<TensorProto> t;
  std::vector<float> floats;
  std::vector<std::int64_t> ints;
  bool has_f = false, has_i = false, has_s = false, has_subgraph = false;
};

struct NodeProto {
  std::string name;
  std::string op_type;
  std::string domain;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;
  std::size_t offset = 0;
};

// A tensor input or output: element type and dimensions, each a number or a symbol (or unknown).
struct ValueInfo {
  struct Dim {
    std::optional<std::int64_t> value;
    std::string param;
  };
  std::string name;
  std::int32_t elem_type = 0;
  bool has_shape = false;
  std::vector<Dim> dims;
};

struct GraphProto {
  std::string name;
  std::vector<NodeProto> nodes;
  std::vector<TensorProto> initializers;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  bool has_sparse_initializers = false;
};

struct ModelProto {
  std::int64_t ir_version = 0;
  std::vector<std::pair<std::string, std::int64_t>> opsets;  // domain, version
  std::optional<GraphProto> graph;
};

// Throws porta::Error(InvalidArgument) naming the byte offset of the first malformed field.
ModelProto decode_model(std::span<const std::uint8_t> bytes);

}  // namespace porta::onnx
