#pragma once
// The handshake between libporta and a backend module (lib/porta/libporta-<name>.so, built with
// -DPORTA_BACKEND_MODULES=ON). The loader reads this C struct before any C++ object crosses, and
// refuses a module whose magic, size, ABI version, name or build id differ from its own: a module
// built against other headers or another C++ ABI would otherwise crash in the first virtual call.
#include <cstddef>
#include <cstdint>

#include "porta_build_id.hpp"  // generated: PORTA_CONTRACT_HASH, PORTA_VERSION_TEXT

namespace porta::detail {

class Backend;

inline constexpr std::uint32_t module_magic = 0x41545250;  // "PRTA"
inline constexpr std::uint32_t module_abi_version = 1;

// porta's version, a hash of the backend contract's headers, the compiler and the C++ library's
// ABI: what two sides must share to pass C++ objects to each other.
#define PORTA_STRINGIFY_(x) #x
#define PORTA_STRINGIFY(x) PORTA_STRINGIFY_(x)
#if defined(__GLIBCXX__)
#define PORTA_STDLIB_ABI "libstdc++ cxx11-abi=" PORTA_STRINGIFY(_GLIBCXX_USE_CXX11_ABI)
#elif defined(_LIBCPP_VERSION)
#define PORTA_STDLIB_ABI "libc++ abi=" PORTA_STRINGIFY(_LIBCPP_ABI_VERSION)
#else
#define PORTA_STDLIB_ABI "unknown C++ library"
#endif
inline constexpr const char* build_id =
    "porta " PORTA_VERSION_TEXT "; contract " PORTA_CONTRACT_HASH "; " __VERSION__ "; " PORTA_STDLIB_ABI;

extern "C" {
// What a module's entry point returns. Later ABI versions may only append fields.
struct PortaModuleInfo {
  std::uint32_t magic;        // module_magic
  std::uint32_t struct_size;  // sizeof(PortaModuleInfo) of the module's build
  std::uint32_t abi_version;  // module_abi_version
  const char* name;           // the backend's name: "cpu", "opencl", "cuda", "hip"
  const char* build_id;       // the module's build_id
  // > 0: the module can run on this machine; 0: it cannot, and `reason` (of `size` bytes) says why.
  int (*score)(char* reason, std::size_t size);
  // A new Backend (porta::detail::Backend*), or null with `error` (of `size` bytes) saying why.
  void* (*create)(char* error, std::size_t size);
  void (*destroy)(void* backend);
};

using PortaModuleEntry = const PortaModuleInfo* (*)();
}

inline constexpr const char* module_entry_symbol = "porta_backend_module";

}  // namespace porta::detail
