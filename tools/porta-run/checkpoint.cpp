#include "checkpoint.hpp"

#include <cctype>
#include <cstdio>
#include <cstring>

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
    npy::Array a{desc.dtype, desc.shape, exe.variable_bytes(name)};
    if (a.dtype == DType::bf16) {  // .npy has no bfloat16
      const std::vector<float> values = exe.variable(name);
      a.dtype = DType::f32;
      a.data.resize(values.size() * sizeof(float));
      std::memcpy(a.data.data(), values.data(), a.data.size());
    }
    npy::write(folder / file_name(name), a);
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
    if (a.dtype == desc.dtype) {
      exe.set_variable_bytes(name, a.data);
    } else {
      std::vector<float> values(static_cast<std::size_t>(desc.numel()));
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = load_as_f32(a.data.data(), i, a.dtype);
      exe.set_variable(name, values);
    }
  }
}

}  // namespace porta::checkpoint
