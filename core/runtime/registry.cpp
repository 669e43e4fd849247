// The backends compiled into this build. Explicit calls rather than static registration, so the
// order is fixed and nothing depends on static initialisation order or on the linker keeping objects.
#include "core/runtime/backend.hpp"

namespace porta::detail {

std::unique_ptr<Backend> make_ref_backend();
std::unique_ptr<Backend> make_cpu_backend();

std::span<const std::unique_ptr<Backend>> registry() {
  static const std::vector<std::unique_ptr<Backend>> backends = [] {
    std::vector<std::unique_ptr<Backend>> list;
    list.push_back(make_ref_backend());
    list.push_back(make_cpu_backend());
    return list;
  }();
  return backends;
}

}  // namespace porta::detail
