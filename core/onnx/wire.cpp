#include "core/onnx/wire.hpp"

#include <bit>
#include <cstring>

#include "porta/error.hpp"

namespace porta::onnx::wire {
namespace {

static_assert(std::endian::native == std::endian::little, "the decoder reads little-endian words in place");

std::string_view type_name(WireType t) {
  switch (t) {
    case WireType::Varint: return "varint";
    case WireType::Fixed64: return "fixed64";
    case WireType::Bytes: return "length-delimited";
    case WireType::Fixed32: return "fixed32";
  }
  return "?";
}

template <class T>
T load(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

Reader::Reader(std::span<const std::uint8_t> bytes, std::size_t base, std::string where)
    : bytes_(bytes), base_(base), where_(std::move(where)) {}

Reader::Reader(const Field& message, std::string where)
    : bytes_(message.bytes), base_(message.payload_offset), where_(std::move(where)) {
  if (message.type != WireType::Bytes)
    throw Error(ErrorCode::InvalidArgument, "ONNX: " + where_ + " at byte " + std::to_string(message.offset) +
                                                " has wire type " + std::string(type_name(message.type)) +
                                                ", expected an embedded message");
}

void Reader::fail(const Field& f, const std::string& message) const {
  throw Error(ErrorCode::InvalidArgument, "ONNX: " + where_ + ", field " + std::to_string(f.number) + " at byte " +
                                              std::to_string(f.offset) + ": " + message);
}

std::uint64_t Reader::varint(std::size_t& pos) const {
  const std::size_t start = pos;
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= bytes_.size())
      throw Error(ErrorCode::InvalidArgument, "ONNX: " + where_ + ": varint at byte " + std::to_string(base_ + start) +
                                                  " is cut off by the end of the data");
    const std::uint8_t b = bytes_[pos++];
    value |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return value;
  }
  throw Error(ErrorCode::InvalidArgument,
              "ONNX: " + where_ + ": varint at byte " + std::to_string(base_ + start) + " is longer than 10 bytes");
}

Field Reader::next() {
  Field f;
  f.offset = base_ + pos_;
  const std::uint64_t tag = varint(pos_);
  f.number = static_cast<std::uint32_t>(tag >> 3);
  const auto type = static_cast<std::uint8_t>(tag & 7);
  if (tag >> 3 == 0 || tag >> 3 > 0x1fffffff)
    throw Error(ErrorCode::InvalidArgument, "ONNX: " + where_ + ": invalid field number " + std::to_string(tag >> 3) +
                                                " at byte " + std::to_string(f.offset));
  const auto need = [&](std::uint64_t n) {
    if (n > bytes_.size() - pos_)
      fail(f, std::to_string(n) + " bytes of value run past the end of " + where_ + " (ends at byte " +
                  std::to_string(base_ + bytes_.size()) + ")");
  };
  switch (type) {
    case 0:
      f.type = WireType::Varint;
      f.value = varint(pos_);
      break;
    case 1:
      f.type = WireType::Fixed64;
      need(8);
      f.value = load<std::uint64_t>(bytes_.data() + pos_);
      pos_ += 8;
      break;
    case 5:
      f.type = WireType::Fixed32;
      need(4);
      f.value = load<std::uint32_t>(bytes_.data() + pos_);
      pos_ += 4;
      break;
    case 2: {
      f.type = WireType::Bytes;
      const std::uint64_t n = varint(pos_);
      need(n);
      f.payload_offset = base_ + pos_;
      f.bytes = bytes_.subspan(pos_, static_cast<std::size_t>(n));
      pos_ += static_cast<std::size_t>(n);
      break;
    }
    default: fail(f, "wire type " + std::to_string(type) + " is not valid here (groups are not used by ONNX)");
  }
  return f;
}

void Reader::expect(const Field& f, WireType type) const {
  if (f.type != type)
    fail(f, "has wire type " + std::string(type_name(f.type)) + ", expected " + std::string(type_name(type)));
}

std::int64_t Reader::int64(const Field& f) const {
  expect(f, WireType::Varint);
  return static_cast<std::int64_t>(f.value);
}

float Reader::float32(const Field& f) const {
  expect(f, WireType::Fixed32);
  return std::bit_cast<float>(static_cast<std::uint32_t>(f.value));
}

std::string Reader::string(const Field& f) const {
  expect(f, WireType::Bytes);
  return {reinterpret_cast<const char*>(f.bytes.data()), f.bytes.size()};
}

void Reader::append_int64s(const Field& f, std::vector<std::int64_t>& out) const {
  if (f.type != WireType::Bytes) {
    out.push_back(int64(f));
    return;
  }
  Reader packed(f.bytes, f.payload_offset, where_);
  for (std::size_t pos = 0; pos < f.bytes.size();) out.push_back(static_cast<std::int64_t>(packed.varint(pos)));
}

void Reader::append_floats(const Field& f, std::vector<float>& out) const {
  if (f.type != WireType::Bytes) {
    out.push_back(float32(f));
    return;
  }
  if (f.bytes.size() % 4 != 0)
    fail(f, "packed floats take " + std::to_string(f.bytes.size()) + " bytes, not a multiple of 4");
  for (std::size_t i = 0; i < f.bytes.size(); i += 4) out.push_back(load<float>(f.bytes.data() + i));
}

void Reader::append_doubles(const Field& f, std::vector<double>& out) const {
  if (f.type != WireType::Bytes) {
    expect(f, WireType::Fixed64);
    out.push_back(std::bit_cast<double>(f.value));
    return;
  }
  if (f.bytes.size() % 8 != 0)
    fail(f, "packed doubles take " + std::to_string(f.bytes.size()) + " bytes, not a multiple of 8");
  for (std::size_t i = 0; i < f.bytes.size(); i += 8) out.push_back(load<double>(f.bytes.data() + i));
}

}  // namespace porta::onnx::wire
