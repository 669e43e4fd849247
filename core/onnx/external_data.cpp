#include "core/onnx/external_data.hpp"

#include <algorithm>
#include <charconv>
#include <system_error>
#include <fstream>
#include <optional>

#include "core/onnx/literal.hpp"
#include "porta/error.hpp"

namespace porta::onnx {
namespace {

std::uint64_t parse_count(const std::string& value, const std::string& key, const std::string& at) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc{} || end != value.data() + value.size() || value.empty())
    throw Error(ErrorCode::InvalidArgument, at + " has external_data " + key + " '" + value + "', not a byte count");
  return n;
}

}  // namespace

TensorProto read_external_data(const TensorProto& t, const std::filesystem::path& folder,
                               std::deque<std::vector<std::uint8_t>>& store, const std::string& what) {
  const std::string at = "ONNX: " + what + " (byte " + std::to_string(t.offset) + ")";
  std::optional<std::string> location;
  std::uint64_t offset = 0;
  std::optional<std::uint64_t> length;
  for (const auto& [key, value] : t.external_data) {
    if (key == "location") location = value;
    if (key == "offset") offset = parse_count(value, key, at);
    if (key == "length") length = parse_count(value, key, at);
  }
  if (!location || location->empty())
    throw Error(ErrorCode::InvalidArgument, at + " keeps its data in an external file but names none (no location)");
  const std::filesystem::path relative(*location);
  bool escapes = relative.is_absolute() || relative.has_root_name();
  for (const auto& part : relative) escapes = escapes || part == "..";
  const std::filesystem::path file = folder / relative;
  const auto unreadable = [&](const std::filesystem::path& p, const std::error_code& ec) {
    return Error(ErrorCode::IoError, at + " keeps its data in '" + file.string() + "': '" + p.string() +
                                         "' cannot be read (" + ec.message() + ")");
  };
  std::error_code ec;
  if (!escapes) {  // nor through a link: its real path lies under the folder's, whether or not it exists
    const std::filesystem::path base = std::filesystem::weakly_canonical(folder.empty() ? "." : folder, ec);
    if (ec) throw unreadable(folder, ec);
    const std::filesystem::path real = std::filesystem::weakly_canonical(base / relative, ec);
    if (ec) throw unreadable(file, ec);
    escapes = std::mismatch(base.begin(), base.end(), real.begin(), real.end()).first != base.end();
  }
  if (escapes)
    throw Error(ErrorCode::InvalidArgument, at + " keeps its data in '" + *location +
                                                "', outside the model's folder; external data lies beside the model");
  const std::filesystem::file_status status = std::filesystem::status(file, ec);
  if (!std::filesystem::exists(status)) {
    if (ec && ec != std::errc::no_such_file_or_directory) throw unreadable(file, ec);
    throw Error(ErrorCode::IoError, at + " keeps its data in '" + file.string() + "', which does not exist");
  }
  if (!std::filesystem::is_regular_file(status))
    throw Error(ErrorCode::InvalidArgument, at + " keeps its data in '" + file.string() + "', which is not a file");
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) throw Error(ErrorCode::IoError, at + " keeps its data in '" + file.string() + "', which cannot be opened");
  const auto size = static_cast<std::uint64_t>(std::max<std::streamoff>(0, in.tellg()));
  if (offset > size || (length && *length > size - offset))
    throw Error(ErrorCode::InvalidArgument, at + " reads " + (length ? std::to_string(*length) : "the") +
                                                " bytes from byte " + std::to_string(offset) + " of '" + file.string() +
                                                "', which holds " + std::to_string(size));
  // Checked before anything is read: a file shared by many tensors, or a length gone wrong, costs no
  // allocation of its size.
  const std::uint64_t take = length ? *length : size - offset;
  const std::optional<std::uint64_t> want = raw_byte_count(t);
  TensorProto resolved = t;
  resolved.external = false;
  resolved.external_data.clear();
  resolved.has_raw_data = true;
  if (!want) return resolved;  // invalid dims or element type, which decode_literal names
  if (take != *want)
    throw Error(ErrorCode::InvalidArgument, at + " has dims " + to_string(Shape(t.dims)) + ", " +
                                                std::to_string(*want) + " bytes of " + elem_type_name(t.data_type) +
                                                ", but its external data is " + std::to_string(take) + " bytes long");
  std::vector<std::uint8_t>& bytes = store.emplace_back(take);
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
    throw Error(ErrorCode::IoError, at + ": reading '" + file.string() + "' failed");
  resolved.raw_data = bytes;
  return resolved;
}

}  // namespace porta::onnx
