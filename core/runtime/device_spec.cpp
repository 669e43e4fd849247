#include <charconv>

#include "core/runtime/backend.hpp"
#include "porta/error.hpp"

namespace porta::detail {

const std::string* DeviceSpec::option(std::string_view key) const {
  for (const auto& [k, v] : options)
    if (k == key) return &v;
  return nullptr;
}

DeviceSpec parse_device_spec(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return Error(ErrorCode::InvalidArgument, "device spec '" + std::string(text) + "': " + why +
                                                 " (expected backend[:index][:key=value,...], e.g. cpu:threads=2 or cuda:0)");
  };
  DeviceSpec spec;
  spec.text = text;
  std::size_t colon = text.find(':');
  spec.backend = text.substr(0, colon);
  if (spec.backend.empty()) throw bad("no backend name");
  bool have_index = false;
  while (colon != std::string_view::npos) {
    const std::size_t start = colon + 1;
    colon = text.find(':', start);
    const std::string_view part = text.substr(start, colon == std::string_view::npos ? colon : colon - start);
    if (part.empty()) throw bad("empty field");
    if (part.find('=') == std::string_view::npos) {
      const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), spec.index);
      if (ec != std::errc{} || end != part.data() + part.size() || spec.index < 0 || have_index)
        throw bad("'" + std::string(part) + "' is neither a device index nor key=value");
      have_index = true;
      continue;
    }
    std::size_t pos = 0;
    while (pos <= part.size()) {
      const std::size_t comma = std::min(part.find(',', pos), part.size());
      const std::string_view item = part.substr(pos, comma - pos);
      const std::size_t eq = item.find('=');
      if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
        throw bad("option '" + std::string(item) + "' is not key=value");
      spec.options.emplace_back(item.substr(0, eq), item.substr(eq + 1));
      pos = comma + 1;
    }
  }
  return spec;
}

}  // namespace porta::detail
