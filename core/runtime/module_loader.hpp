#pragma once
// Run-time modules (-DPORTA_BACKEND_MODULES=ON): a backend, lib/porta/libporta-<name>.so, or a
// vendor library's provider for one, lib/porta/libporta-<backend>-<library>.so, found along
// module_search_path() and loaded on first use. A backend whose module is missing or refused stays
// in the registry with no devices and the reason, which Device::open throws; a vendor module that
// is, makes impl=vendor unsupported with the reason.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/backend.hpp"

namespace porta::detail {

// The backends a module build looks for, in the registry's order after ref.
inline constexpr const char* module_backend_names[] = {"cpu", "opencl", "cuda", "hip"};

// Where modules are looked for, in order: each folder of PORTA_BACKEND_PATH (colon-separated), the
// folder porta/ beside libporta.so, the installed libdir's porta/, the executable's folder. Never
// the current directory; no folder twice.
std::vector<std::filesystem::path> module_search_path();

// A loaded module's object: a Backend, or the provider its backend and it agree on by name. Never
// unloaded: the module stays mapped until the process ends.
struct LoadedModule {
  std::filesystem::path file;
  void* object = nullptr;
  void (*destroy)(void*) = nullptr;
};

// Loads `file` and checks its handshake: throws DeviceUnavailable with the loader's words (dlopen's
// error, a missing entry point, a magic, size, ABI version, name or build id that differ from
// libporta's, a create that failed).
LoadedModule load_module(const std::filesystem::path& file, const std::string& name);

// libporta-<name>.so from the first folder of the search path that has it; throws as load_module,
// or DeviceUnavailable listing the folders searched.
LoadedModule find_module(const std::string& name);

// The registry's entry for backend `name`: its module is found on the first call to status(),
// open() or tune().
std::unique_ptr<Backend> make_module_backend(std::string name);

// The provider of vendor module `name` (e.g. "cpu-onednn"), found on the first call; later calls
// return it, or throw the first call's error, without searching again.
const void* vendor_module(const std::string& name);

}  // namespace porta::detail
