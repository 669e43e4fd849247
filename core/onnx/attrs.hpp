#pragma once
// Shared by the importer (import.cpp) and the load-time evaluator (fold.cpp): a node's attributes
// with ONNX's defaults and a type check, and the importer's error helpers.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/onnx/model.hpp"
#include "porta/error.hpp"

namespace porta::onnx {

[[noreturn]] inline void invalid(const std::string& message) {
  throw Error(ErrorCode::InvalidArgument, "ONNX: " + message);
}
[[noreturn]] inline void unsupported(const std::string& message) {
  throw Error(ErrorCode::Unsupported, "ONNX: " + message);
}

class Attrs {
 public:
  explicit Attrs(const NodeProto& n) : node_(n) {}

  const Attribute* find(std::string_view name, AttrType type) const {
    for (const auto& a : node_.attributes) {
      if (a.name != name) continue;
      if (a.type != 0 && a.type != static_cast<std::int32_t>(type))
        invalid("attribute '" + a.name + "' has type " + std::to_string(a.type) + ", expected " +
                std::to_string(static_cast<int>(type)));
      return &a;
    }
    return nullptr;
  }
  std::int64_t int64(std::string_view name, std::int64_t fallback) const {
    const Attribute* a = find(name, AttrType::Int);
    return a ? a->i : fallback;
  }
  float float32(std::string_view name, float fallback) const {
    const Attribute* a = find(name, AttrType::Float);
    return a ? a->f : fallback;
  }
  std::string string(std::string_view name, std::string fallback) const {
    const Attribute* a = find(name, AttrType::String);
    return a ? a->s : fallback;
  }
  std::vector<std::int64_t> ints(std::string_view name, std::vector<std::int64_t> fallback) const {
    const Attribute* a = find(name, AttrType::Ints);
    return a ? a->ints : fallback;
  }
  template <std::size_t N>
  std::array<std::int64_t, N> array(std::string_view name, std::int64_t fallback) const {
    std::array<std::int64_t, N> out;
    out.fill(fallback);
    if (const Attribute* a = find(name, AttrType::Ints)) {
      if (a->ints.size() != N)
        unsupported("attribute '" + std::string(name) + "' has " + std::to_string(a->ints.size()) + " values; porta " +
                    "supports 2-D windows only (" + std::to_string(N) + " values)");
      std::copy(a->ints.begin(), a->ints.end(), out.begin());
    }
    return out;
  }

 private:
  const NodeProto& node_;
};

}  // namespace porta::onnx
