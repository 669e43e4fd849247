#include "npy.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>

#include "porta/error.hpp"

namespace porta::npy {
namespace {

constexpr char magic[] = "\x93NUMPY";
constexpr std::size_t magic_size = 6;

// The .npy type codes porta reads and writes (little-endian; bool is one byte, '|b1').
struct Descr {
  const char* code;
  DType dtype;
};
constexpr Descr descrs[] = {{"f4", DType::f32}, {"f2", DType::f16}, {"i8", DType::i64}, {"i4", DType::i32},
                            {"b1", DType::boolean}};

[[noreturn]] void bad(const std::string& what, const std::string& message) {
  throw Error(ErrorCode::InvalidArgument, what + ": " + message);
}

// The value text after `'key':` in the header dict, up to the next top-level comma or brace.
std::string_view dict_value(std::string_view header, std::string_view key, const std::string& what) {
  std::string quoted = "'";
  quoted.append(key).append("'");
  const auto at = header.find(quoted);
  if (at == std::string_view::npos) bad(what, "the header has no " + quoted + " entry");
  auto pos = header.find(':', at + quoted.size());
  if (pos == std::string_view::npos) bad(what, "the header's " + quoted + " entry has no value");
  ++pos;
  while (pos < header.size() && header[pos] == ' ') ++pos;
  std::size_t end = pos;
  int depth = 0;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')' && --depth < 0) break;
    if ((c == ',' || c == '}') && depth == 0) break;
  }
  if (depth > 0) bad(what, "the header's " + quoted + " entry is not closed");
  return header.substr(pos, end - pos);
}

Shape parse_shape(std::string_view text, const std::string& what) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    bad(what, "shape " + std::string(text) + " is not a tuple");
  text = text.substr(1, text.size() - 2);
  Shape shape;
  while (!text.empty()) {
    while (!text.empty() && (text.front() == ' ' || text.front() == ',')) text.remove_prefix(1);
    if (text.empty()) break;
    std::int64_t d = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (ec != std::errc{} || d < 0) bad(what, "shape has an invalid dimension near '" + std::string(text) + "'");
    shape.push_back(d);
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    if (!text.empty() && text.front() != ',' && text.front() != ' ')
      bad(what, "shape has an invalid dimension near '" + std::string(text) + "'");
  }
  return shape;
}

}  // namespace

Array parse(std::span<const std::byte> bytes, const std::string& what) {
  const auto* p = reinterpret_cast<const char*>(bytes.data());
  if (bytes.size() < magic_size + 4 || std::memcmp(p, magic, magic_size) != 0)
    bad(what, "not a .npy file (no \\x93NUMPY magic)");
  const auto major = static_cast<unsigned char>(p[6]);
  std::size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(p[8]) | static_cast<std::size_t>(static_cast<unsigned char>(p[9])) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) bad(what, "the header is cut off");
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | static_cast<unsigned char>(p[8 + i]);
    header_start = 12;
  } else {
    bad(what, "format version " + std::to_string(major) + " is not one of 1, 2, 3");
  }
  if (header_len > bytes.size() - header_start) bad(what, "the header is cut off");
  const std::string_view header(p + header_start, header_len);

  const std::string_view descr = dict_value(header, "descr", what);
  Array a;
  // The code between the quotes, after its byte-order mark ('<' little-endian, '|' not applicable).
  std::string_view code = descr.size() >= 2 && descr.front() == '\'' && descr.back() == '\''
                              ? descr.substr(1, descr.size() - 2)
                              : std::string_view{};
  if (!code.empty() && (code.front() == '<' || code.front() == '|')) code.remove_prefix(1);
  const auto known = std::find_if(std::begin(descrs), std::end(descrs), [&](const Descr& d) { return code == d.code; });
  if (known == std::end(descrs))
    bad(what, "dtype " + std::string(descr) +
                  " is not supported; use little-endian float32 ('<f4'), float16 ('<f2'), int64 ('<i8'), int32 "
                  "('<i4') or bool ('|b1')");
  a.dtype = known->dtype;
  const std::string_view order = dict_value(header, "fortran_order", what);
  if (order == "True") bad(what, "the array is in Fortran order; save it in C order (np.ascontiguousarray)");
  if (order != "False") bad(what, "fortran_order " + std::string(order) + " is not True or False");
  a.shape = parse_shape(dict_value(header, "shape", what), what);

  std::size_t count = 1;
  for (auto d : a.shape)
    if (__builtin_mul_overflow(count, static_cast<std::size_t>(d), &count))
      bad(what, "shape " + to_string(a.shape) + " is too large");
  std::size_t size = 0;
  if (__builtin_mul_overflow(count, size_of(a.dtype), &size))
    bad(what, "shape " + to_string(a.shape) + " is too large");
  const std::size_t have = bytes.size() - header_start - header_len;
  if (have != size)
    bad(what, "shape " + to_string(a.shape) + " of " + std::string(to_string(a.dtype)) + " needs " +
                  std::to_string(size) + " data bytes, the file has " + std::to_string(have) +
                  (have < size ? " (truncated)" : ""));
  const auto* data = bytes.data() + header_start + header_len;
  a.data.assign(data, data + size);
  return a;
}

std::vector<std::byte> serialize(const Array& array) {
  const auto known =
      std::find_if(std::begin(descrs), std::end(descrs), [&](const Descr& d) { return d.dtype == array.dtype; });
  if (known == std::end(descrs))
    throw Error(ErrorCode::Unsupported, "npy: bfloat16 has no .npy dtype; convert to float32 first");
  std::string shape = "(";  // Python tuples: (), (4,), (2, 3)
  for (std::size_t i = 0; i < array.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(array.shape[i]);
  shape += array.shape.size() == 1 ? ",)" : ")";
  std::string header = std::string("{'descr': '") + (array.dtype == DType::boolean ? "|" : "<") + known->code +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Data starts on a 64-byte boundary, the header ends in a newline.
  const std::size_t total = magic_size + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<std::byte> out(magic_size + 4);
  std::memcpy(out.data(), magic, magic_size);
  out[6] = std::byte{1};
  out[7] = std::byte{0};
  out[8] = static_cast<std::byte>(header.size() & 0xff);
  out[9] = static_cast<std::byte>(header.size() >> 8);
  for (char c : header) out.push_back(static_cast<std::byte>(c));
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

Array read(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(ErrorCode::IoError, path.string() + ": is a directory");
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) throw Error(ErrorCode::IoError, path.string() + ": cannot open the file");
  std::vector<std::byte> bytes(static_cast<std::size_t>(std::max<std::streamoff>(0, file.tellg())));
  file.seekg(0);
  if (!file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
    throw Error(ErrorCode::IoError, path.string() + ": reading the file failed");
  return parse(bytes, path.string());
}

void write(const std::filesystem::path& path, const Array& array) {
  const auto bytes = serialize(array);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file || !file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
    throw Error(ErrorCode::IoError, path.string() + ": cannot write the file");
}

Array storable(DType dtype, Shape shape, std::vector<std::byte> bytes) {
  if (dtype != DType::bf16) return {dtype, std::move(shape), std::move(bytes)};
  const std::size_t n = bytes.size() / 2;
  Array a{DType::f32, std::move(shape), std::vector<std::byte>(n * 4)};
  for (std::size_t i = 0; i < n; ++i) {
    std::uint16_t half = 0;
    std::memcpy(&half, bytes.data() + 2 * i, 2);
    const std::uint32_t widened = std::uint32_t{half} << 16;  // bf16 is the top half of a float32
    std::memcpy(a.data.data() + 4 * i, &widened, 4);
  }
  return a;
}

namespace {

bool holds(DType dtype, std::int64_t v) {
  switch (dtype) {
    case DType::i32: return v >= INT32_MIN && v <= INT32_MAX;
    case DType::boolean: return v == 0 || v == 1;
    default: return true;
  }
}

// Element i of a float32 array that holds a bf16 exactly, as its bits; false for any other float32.
bool bf16_bits(const Array& a, std::size_t i, std::uint16_t& bits) {
  std::uint32_t x = 0;
  std::memcpy(&x, a.data.data() + 4 * i, 4);
  bits = static_cast<std::uint16_t>(x >> 16);
  return (x & 0xffffu) == 0;
}

}  // namespace

std::vector<std::byte> bytes_as(const Array& array, DType dtype, const std::string& what) {
  if (array.dtype == dtype) return array.data;
  if (is_float(array.dtype) != is_float(dtype))
    throw Error(ErrorCode::DTypeMismatch, what + ": " + std::string(to_string(array.dtype)) + " data for a " +
                                              std::string(to_string(dtype)) +
                                              " tensor (integers and floats do not convert exactly; convert it first)");
  const std::size_t n = array.data.size() / size_of(array.dtype);
  std::vector<std::byte> out(n * size_of(dtype));
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_float(dtype)) {
      const std::int64_t v = load_as_i64(array.data.data(), i, array.dtype);
      if (!holds(dtype, v))
        throw Error(ErrorCode::InvalidArgument, what + ": element " + std::to_string(i) + ", " + std::to_string(v) +
                                                    ", does not fit " + std::string(to_string(dtype)));
      store_from_i64(out.data(), i, dtype, v);
    } else if (std::uint16_t bits = 0; dtype == DType::bf16 && array.dtype == DType::f32 && bf16_bits(array, i, bits)) {
      std::memcpy(out.data() + 2 * i, &bits, 2);
    } else {
      store_from_f32(out.data(), i, dtype, load_as_f32(array.data.data(), i, array.dtype));
    }
  }
  return out;
}

}  // namespace porta::npy
