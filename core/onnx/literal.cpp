#include "core/onnx/literal.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "porta/error.hpp"

namespace porta::onnx {
namespace {

template <class T>
void read_ints(std::span<const std::uint8_t> raw, std::vector<std::int64_t>& out) {
  out.resize(raw.size() / sizeof(T));
  for (std::size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<std::int64_t>(v);
  }
}

std::size_t elem_size(ElemType t) {
  switch (t) {
    case ElemType::Uint8:
    case ElemType::Int8:
    case ElemType::Bool: return 1;
    case ElemType::Uint16:
    case ElemType::Int16:
    case ElemType::Float16:
    case ElemType::BFloat16: return 2;
    case ElemType::Float:
    case ElemType::Int32:
    case ElemType::Uint32: return 4;
    case ElemType::Int64:
    case ElemType::Uint64:
    case ElemType::Double: return 8;
    default: return 0;
  }
}

}  // namespace

std::int64_t Literal::numel() const {
  std::int64_t n = 1;
  for (auto d : dims) n *= d;  // checked when decoded
  return n;
}

std::vector<float> Literal::floats() const {
  std::vector<float> out(static_cast<std::size_t>(numel()));
  if (!is_float) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(ints[i]);
  } else {
    for (std::size_t i = 0; i < out.size(); ++i) {  // memcpy: a view of raw_data may be unaligned
      if (dtype == DType::f32) {
        std::memcpy(&out[i], bytes.data() + 4 * i, 4);
      } else {
        std::uint16_t bits;
        std::memcpy(&bits, bytes.data() + 2 * i, 2);
        out[i] = dtype == DType::f16 ? f16_to_f32(bits) : bf16_to_f32(bits);
      }
    }
  }
  return out;
}

std::optional<std::uint64_t> raw_byte_count(const TensorProto& t) {
  std::int64_t numel = 1;
  for (auto d : t.dims)
    if (d < 0 || __builtin_mul_overflow(numel, d, &numel) || numel > (std::int64_t{1} << 40)) return std::nullopt;
  const std::size_t esize = elem_size(static_cast<ElemType>(t.data_type));
  if (esize == 0) return std::nullopt;
  return static_cast<std::uint64_t>(numel) * esize;
}

Literal decode_literal(const TensorProto& t, const std::string& what) {
  const std::string at = "ONNX: " + what + " (byte " + std::to_string(t.offset) + ")";
  if (t.external)
    throw Error(ErrorCode::Unsupported, at + " keeps its data in an external file, which porta reads for the "
                                             "initializers of a model loaded from its file (onnx::load), not "
                                             "from bytes or for other tensors");
  Literal lit;
  lit.name = t.name;
  std::int64_t numel = 1;
  for (auto d : t.dims) {
    if (d < 0 || __builtin_mul_overflow(numel, d, &numel) || numel > (std::int64_t{1} << 40))
      throw Error(ErrorCode::InvalidArgument, at + " has invalid dims " + to_string(Shape(t.dims)));
  }
  lit.dims = Shape(t.dims.begin(), t.dims.end());
  const auto type = static_cast<ElemType>(t.data_type);
  const std::size_t esize = elem_size(type);
  if (esize == 0)
    throw Error(ErrorCode::Unsupported, at + " has element type " + elem_type_name(t.data_type) +
                                            "; porta reads float, float16, bfloat16, double, integer and bool tensors");
  const auto n = static_cast<std::size_t>(numel);
  // Every count is checked against the data actually present before anything is allocated.
  const char* field = type == ElemType::Float    ? "float_data"
                      : type == ElemType::Double ? "double_data"
                                                 : "int32_data/int64_data/uint64_data";
  std::size_t have = type == ElemType::Float    ? t.float_data.size()
                     : type == ElemType::Double ? t.double_data.size()
                                                : t.int_data.size();
  if (t.has_raw_data) {
    field = "raw_data";
    have = t.raw_data.size() % esize == 0 ? t.raw_data.size() / esize : SIZE_MAX;
  }
  if (have != n)
    throw Error(ErrorCode::InvalidArgument,
                at + " has dims " + to_string(lit.dims) + " (" + std::to_string(n) + " elements of " +
                    elem_type_name(t.data_type) + ") but its " + field + " holds " +
                    (t.has_raw_data ? std::to_string(t.raw_data.size()) + " bytes" : std::to_string(have) + " values"));

  switch (type) {
    case ElemType::Float:
    case ElemType::Float16:
    case ElemType::BFloat16:
    case ElemType::Double: {
      lit.dtype = type == ElemType::Float16 ? DType::f16 : type == ElemType::BFloat16 ? DType::bf16 : DType::f32;
      if (t.has_raw_data && type != ElemType::Double) {
        lit.bytes = std::as_bytes(t.raw_data);
        return lit;
      }
      std::vector<std::byte> data(n * size_of(lit.dtype));
      if (t.has_raw_data) {
        for (std::size_t i = 0; i < n; ++i) {
          double v;
          std::memcpy(&v, t.raw_data.data() + 8 * i, 8);
          store_from_f32(data.data(), i, DType::f32, static_cast<float>(v));
        }
      } else if (type == ElemType::Float) {
        std::copy(t.float_data.begin(), t.float_data.end(), reinterpret_cast<float*>(data.data()));
      } else if (type == ElemType::Double) {
        for (std::size_t i = 0; i < n; ++i)
          store_from_f32(data.data(), i, DType::f32, static_cast<float>(t.double_data[i]));
      } else {  // 16-bit floats travel as their bit patterns in int32_data
        for (std::size_t i = 0; i < n; ++i) {
          const auto bits = static_cast<std::uint16_t>(t.int_data[i]);
          std::memcpy(data.data() + 2 * i, &bits, 2);
        }
      }
      lit.own(std::move(data));
      return lit;
    }
    default: break;
  }

  lit.is_float = false;
  lit.dtype = type == ElemType::Bool ? DType::boolean : type == ElemType::Int32 ? DType::i32 : DType::i64;
  if (!t.has_raw_data) {
    lit.ints = t.int_data;
    return lit;
  }
  switch (type) {
    case ElemType::Uint8:
    case ElemType::Bool: read_ints<std::uint8_t>(t.raw_data, lit.ints); break;
    case ElemType::Int8: read_ints<std::int8_t>(t.raw_data, lit.ints); break;
    case ElemType::Uint16: read_ints<std::uint16_t>(t.raw_data, lit.ints); break;
    case ElemType::Int16: read_ints<std::int16_t>(t.raw_data, lit.ints); break;
    case ElemType::Int32: read_ints<std::int32_t>(t.raw_data, lit.ints); break;
    case ElemType::Uint32: read_ints<std::uint32_t>(t.raw_data, lit.ints); break;
    case ElemType::Int64: read_ints<std::int64_t>(t.raw_data, lit.ints); break;
    case ElemType::Uint64: read_ints<std::uint64_t>(t.raw_data, lit.ints); break;
    default: break;
  }
  return lit;
}

}  // namespace porta::onnx
