#pragma once
// A module's entry point (core/runtime/module_abi.hpp): PORTA_BACKEND_MODULE(name, factory) for a
// backend, in backends/<backend>/module.cpp; PORTA_VENDOR_MODULE(name, provider) for a vendor
// library's provider, in backends/<backend>/vendor/module.cpp. The static build leaves them out.
#include <cstdio>
#include <exception>
#include <memory>

#include "core/runtime/backend.hpp"
#include "core/runtime/module_abi.hpp"

namespace porta::detail {

// Calls `make`; an exception becomes null and its message in `error`, as nothing C++ may cross
// the handshake.
template <class Make>
void* create_module_object(Make make, char* error, std::size_t size) noexcept {
  try {
    return make();
  } catch (const std::exception& e) {
    std::snprintf(error, size, "%s", e.what());
  } catch (...) {
    std::snprintf(error, size, "an exception that is not a std::exception");
  }
  return nullptr;
}

}  // namespace porta::detail

#define PORTA_MODULE_ENTRY_(module_name, make, destroy_object)                                     \
  extern "C" __attribute__((visibility("default"))) const porta::detail::PortaModuleInfo*         \
  porta_backend_module() {                                                                         \
    static const porta::detail::PortaModuleInfo info{                                              \
        .magic = porta::detail::module_magic,                                                      \
        .struct_size = sizeof(porta::detail::PortaModuleInfo),                                     \
        .abi_version = porta::detail::module_abi_version,                                          \
        .name = module_name,                                                                       \
        .build_id = porta::detail::build_id,                                                       \
        .score = [](char*, std::size_t) { return 1; },                                             \
        .create = [](char* error, std::size_t size) {                                              \
          return porta::detail::create_module_object([]() -> void* { make }, error, size);         \
        },                                                                                         \
        .destroy = [](void* object) { destroy_object },                                            \
    };                                                                                             \
    return &info;                                                                                  \
  }

// A backend made by `factory()`, a std::unique_ptr<Backend>.
#define PORTA_BACKEND_MODULE(backend_name, factory) \
  PORTA_MODULE_ENTRY_(backend_name, return factory().release();, delete static_cast<porta::detail::Backend*>(object);)

// A vendor provider: `provider()` returns a reference to an object that lives as long as the module.
#define PORTA_VENDOR_MODULE(module_name, provider)                                                        \
  PORTA_MODULE_ENTRY_(module_name, return const_cast<void*>(static_cast<const void*>(&provider()));, \
                      (void)object;)
