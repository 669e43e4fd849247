// ModelProto decoding: field numbers are those of onnx.proto. Unknown fields are skipped, as
// protobuf readers do, so newer writers' additions do not break loading.
#include "core/onnx/model.hpp"

#include "core/onnx/wire.hpp"
#include "porta/error.hpp"

namespace porta::onnx {
namespace {

using wire::Field;
using wire::Reader;
using wire::WireType;

std::string indexed(const std::string& parent, const char* field, std::size_t i) {
  return parent + "." + field + "[" + std::to_string(i) + "]";
}

std::int32_t int32(const Reader& r, const Field& f) { return static_cast<std::int32_t>(r.int64(f)); }

// A StringStringEntryProto: key 1, value 2.
std::pair<std::string, std::string> decode_entry(const Field& message, const std::string& where) {
  Reader r(message, where);
  std::pair<std::string, std::string> entry;
  while (!r.done()) {
    const Field f = r.next();
    if (f.number == 1) entry.first = r.string(f);
    if (f.number == 2) entry.second = r.string(f);
  }
  return entry;
}

TensorProto decode_tensor(const Field& message, const std::string& where) {
  Reader r(message, where);
  TensorProto t;
  t.offset = message.offset;
  while (!r.done()) {
    const Field f = r.next();
    switch (f.number) {
      case 1: r.append_int64s(f, t.dims); break;
      case 2: t.data_type = int32(r, f); break;
      case 4: r.append_floats(f, t.float_data); break;
      case 5:
      case 7:
      case 11: r.append_int64s(f, t.int_data); break;  // int32, int64, uint64 data
      case 6: t.has_strings = true; break;
      case 8: t.name = r.string(f); break;
      case 9:
        if (f.type != WireType::Bytes) r.fail(f, "raw_data must be length-delimited");
        t.raw_data = f.bytes;
        t.has_raw_data = true;
        break;
      case 10: r.append_doubles(f, t.double_data); break;
      case 13:
        t.external = true;
        t.external_data.push_back(decode_entry(f, where + ".external_data"));
        break;
      case 14: t.external = t.external || r.int64(f) == 1; break;
      case 3: r.fail(f, "segmented tensors are not supported");
      default: break;
    }
  }
  return t;
}

Attribute decode_attribute(const Field& message, const std::string& where) {
  Reader r(message, where);
  Attribute a;
  while (!r.done()) {
    const Field f = r.next();
    switch (f.number) {
      case 1: a.name = r.string(f); break;
      case 20: a.type = int32(r, f); break;
      case 2:
        a.f = r.float32(f);
        a.has_f = true;
        break;
      case 3:
        a.i = r.int64(f);
        a.has_i = true;
        break;
      case 4:
        a.s = r.string(f);
        a.has_s = true;
        break;
      case 5: a.t = decode_tensor(f, where + ".t"); break;
      case 6:
      case 11: a.has_subgraph = true; break;  // subgraphs belong to control-flow ops, unsupported
      case 7: r.append_floats(f, a.floats); break;
      case 8: r.append_int64s(f, a.ints); break;
      default: break;
    }
  }
  return a;
}

NodeProto decode_node(const Field& message, const std::string& where) {
  Reader r(message, where);
  NodeProto n;
  n.offset = message.offset;
  while (!r.done()) {
    const Field f = r.next();
    switch (f.number) {
      case 1: n.inputs.push_back(r.string(f)); break;
      case 2: n.outputs.push_back(r.string(f)); break;
      case 3: n.name = r.string(f); break;
      case 4: n.op_type = r.string(f); break;
      case 7: n.domain = r.string(f); break;
      case 5: n.attributes.push_back(decode_attribute(f, indexed(where, "attribute", n.attributes.size()))); break;
      default: break;
    }
  }
  return n;
}

void decode_shape(const Field& message, const std::string& where, ValueInfo& v) {
  Reader r(message, where);
  v.has_shape = true;
  while (!r.done()) {
    const Field f = r.next();
    if (f.number != 1) continue;
    Reader dim(f, indexed(where, "dim", v.dims.size()));
    ValueInfo::Dim d;
    while (!dim.done()) {
      const Field g = dim.next();
      if (g.number == 1) d.value = dim.int64(g);
      if (g.number == 2) d.param = dim.string(g);
    }
    v.dims.push_back(std::move(d));
  }
}

ValueInfo decode_value_info(const Field& message, const std::string& where) {
  Reader r(message, where);
  ValueInfo v;
  while (!r.done()) {
    const Field f = r.next();
    if (f.number == 1) v.name = r.string(f);
    if (f.number != 2) continue;
    Reader type(f, where + ".type");
    while (!type.done()) {
      const Field g = type.next();
      if (g.number != 1) continue;  // sequences, maps and the rest are not tensors: elem_type stays 0
      Reader tensor(g, where + ".type.tensor_type");
      while (!tensor.done()) {
        const Field h = tensor.next();
        if (h.number == 1) v.elem_type = int32(tensor, h);
        if (h.number == 2) decode_shape(h, where + ".type.tensor_type.shape", v);
      }
    }
  }
  return v;
}

GraphProto decode_graph(const Field& message) {
  Reader r(message, "graph");
  GraphProto g;
  while (!r.done()) {
    const Field f = r.next();
    switch (f.number) {
      case 1: g.nodes.push_back(decode_node(f, indexed("graph", "node", g.nodes.size()))); break;
      case 2: g.name = r.string(f); break;
      case 5: g.initializers.push_back(decode_tensor(f, indexed("graph", "initializer", g.initializers.size()))); break;
      case 11: g.inputs.push_back(decode_value_info(f, indexed("graph", "input", g.inputs.size()))); break;
      case 12: g.outputs.push_back(decode_value_info(f, indexed("graph", "output", g.outputs.size()))); break;
      case 15: g.has_sparse_initializers = true; break;
      default: break;
    }
  }
  return g;
}

}  // namespace

std::string elem_type_name(std::int32_t type) {
  switch (static_cast<ElemType>(type)) {
    case ElemType::Undefined: return "undefined";
    case ElemType::Float: return "float";
    case ElemType::Uint8: return "uint8";
    case ElemType::Int8: return "int8";
    case ElemType::Uint16: return "uint16";
    case ElemType::Int16: return "int16";
    case ElemType::Int32: return "int32";
    case ElemType::Int64: return "int64";
    case ElemType::String: return "string";
    case ElemType::Bool: return "bool";
    case ElemType::Float16: return "float16";
    case ElemType::Double: return "double";
    case ElemType::Uint32: return "uint32";
    case ElemType::Uint64: return "uint64";
    case ElemType::BFloat16: return "bfloat16";
  }
  return "type " + std::to_string(type);
}

ModelProto decode_model(std::span<const std::uint8_t> bytes) {
  Reader r(bytes, 0, "model");
  ModelProto m;
  while (!r.done()) {
    const Field f = r.next();
    switch (f.number) {
      case 1: m.ir_version = r.int64(f); break;
      case 7:
        if (m.graph) r.fail(f, "the model has more than one graph");
        m.graph = decode_graph(f);
        break;
      case 8: {
        Reader opset(f, indexed("model", "opset_import", m.opsets.size()));
        std::pair<std::string, std::int64_t> entry;
        while (!opset.done()) {
          const Field g = opset.next();
          if (g.number == 1) entry.first = opset.string(g);
          if (g.number == 2) entry.second = opset.int64(g);
        }
        m.opsets.push_back(std::move(entry));
        break;
      }
      default: break;
    }
  }
  return m;
}

}  // namespace porta::onnx
