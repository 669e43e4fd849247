#include "core/runtime/tuning.hpp"

#include "core/runtime/backend.hpp"

namespace porta::detail {

TuneReport tune_device(std::string_view text, const TuneSettings& settings) {
  const DeviceSpec spec = parse_device_spec(text);
  return find_backend(spec).tune(spec, settings);
}

}  // namespace porta::detail
