#pragma once
// Protobuf wire format, read with a bounds check on every byte: a field is a tag (field number and
// wire type) and a value, a varint, a fixed 32/64-bit word or a length-delimited run of bytes.
// Every failure is a porta::Error(InvalidArgument) naming the absolute byte offset.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace porta::onnx::wire {

enum class WireType : std::uint8_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

struct Field {
  std::uint32_t number = 0;
  WireType type = WireType::Varint;
  std::uint64_t value = 0;              // Varint, Fixed64 and Fixed32
  std::span<const std::uint8_t> bytes;  // Bytes
  std::size_t offset = 0;               // absolute offset of the tag
  std::size_t payload_offset = 0;       // absolute offset of the value (for nested messages)
};

// Reads the fields of one message in order. `where` names the message in error messages.
class Reader {
 public:
  Reader(std::span<const std::uint8_t> bytes, std::size_t base, std::string where);
  Reader(const Field& message, std::string where);  // a nested message

  bool done() const noexcept { return pos_ == bytes_.size(); }
  Field next();
  const std::string& where() const noexcept { return where_; }

  [[noreturn]] void fail(const Field& f, const std::string& message) const;

  // Typed views of a field; the wrong wire type is an error naming the field.
  std::int64_t int64(const Field& f) const;
  float float32(const Field& f) const;
  std::string string(const Field& f) const;
  // Repeated scalars, packed (one Bytes field) or not (one field per value).
  void append_int64s(const Field& f, std::vector<std::int64_t>& out) const;
  void append_floats(const Field& f, std::vector<float>& out) const;
  void append_doubles(const Field& f, std::vector<double>& out) const;

 private:
  std::uint64_t varint(std::size_t& pos) const;
  void expect(const Field& f, WireType type) const;

  std::span<const std::uint8_t> bytes_;
  std::size_t base_;
  std::size_t pos_ = 0;
  std::string where_;
};

}  // namespace porta::onnx::wire
