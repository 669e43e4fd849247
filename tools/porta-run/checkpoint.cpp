#include "checkpoint.hpp"

#include <cctype>
#include <cstdio>

#include "npy.hpp"
#include "porta/error.hpp"

namespace porta::checkpoint {

std::string file_name(const std::string& variable) {
  std::string out;
  for (const char c : variable) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') {
      out += c;
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
      out += hex;
    }
  }
  return out + ".npy";
}

void save(const Executable& exe, const std::filesystem::path& folder) {
  std::filesystem::create_directories(folder);
  for (const std::string& name : exe.variable_names()) {
    const TensorDesc& desc = exe.variable_desc(name);
    npy::write(folder / file_name(name), npy::storable(desc.dtype, desc.shape, exe.variable_bytes(name)));
  }
}

void load(Executable& exe, const std::filesystem::path& folder) {
  for (const std::string& name : exe.variable_names()) {
    const std::filesystem::path path = folder / file_name(name);
    if (!std::filesystem::exists(path))
      throw Error(ErrorCode::NotFound, "checkpoint " + folder.string() + " has no file " + path.filename().string() +
                                           " for variable '" + name + "'");
    const npy::Array a = npy::read(path);
    const TensorDesc& desc = exe.variable_desc(name);
    if (a.shape != desc.shape)
      throw Error(ErrorCode::ShapeMismatch, path.string() + ": shape " + to_string(a.shape) + " does not match variable '" +
                                                name + "' " + to_string(desc.shape));
    exe.set_variable_bytes(name, npy::bytes_as(a, desc.dtype, path.string()));
  }
}

}  // namespace porta::checkpoint
