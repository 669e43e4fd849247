#include "core/runtime/module_loader.hpp"

#include <dlfcn.h>
#include <link.h>  // ElfW: the ELF structs of this machine's word size

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <system_error>

#include "core/runtime/module_abi.hpp"
#include "porta/error.hpp"

namespace porta::detail {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void refuse(const fs::path& file, const std::string& why) {
  throw Error(ErrorCode::DeviceUnavailable, "not loaded: " + file.string() + ": " + why);
}

fs::path libporta_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&module_search_path), &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  const fs::path self = fs::canonical(info.dli_fname, ec);
  return ec ? fs::path{} : self.parent_path();
}

fs::path executable_folder() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path{} : self.parent_path();
}

// Why `file` is not a whole ELF shared object of this machine's kind, or empty. dlopen maps a
// truncated file's segments past its end and faults on first touch (SIGBUS), so the loader reads
// the headers first.
std::string elf_problem(const fs::path& file) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(file, ec);
  if (ec) return ec.message();
  std::ifstream in(file, std::ios::binary);
  if (!in) return "cannot open the file for reading";
  ElfW(Ehdr) header{};
  if (!in.read(reinterpret_cast<char*>(&header), sizeof header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return "not an ELF file";
  if (header.e_ident[EI_CLASS] != (sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32) || header.e_type != ET_DYN ||
      header.e_phentsize != sizeof(ElfW(Phdr)))
    return "not a shared object of this machine's word size";
  if (header.e_phoff + std::uintmax_t(header.e_phnum) * sizeof(ElfW(Phdr)) > size)
    return "truncated: its program headers run past the end of the file";
  for (int i = 0; i < header.e_phnum; ++i) {
    ElfW(Phdr) segment{};
    in.seekg(static_cast<std::streamoff>(header.e_phoff + i * sizeof(ElfW(Phdr))));
    if (!in.read(reinterpret_cast<char*>(&segment), sizeof segment)) return "cannot read its program headers";
    if (segment.p_type == PT_LOAD && segment.p_offset + segment.p_filesz > size)
      return "truncated: a segment runs past the end of the file (" + std::to_string(size) + " bytes)";
  }
  return {};
}

// Checks the struct the entry point returned against this libporta's side of the handshake.
void check_handshake(const fs::path& file, const PortaModuleInfo* info, const std::string& backend_name) {
  if (!info) refuse(file, std::string(module_entry_symbol) + " returned null");
  if (info->magic != module_magic) refuse(file, "not a porta backend module (wrong magic number)");
  if (info->abi_version != module_abi_version || info->struct_size < sizeof(PortaModuleInfo))
    refuse(file, "module ABI version " + std::to_string(info->abi_version) + " (struct of " +
                     std::to_string(info->struct_size) + " bytes); this libporta speaks version " +
                     std::to_string(module_abi_version));
  if (!info->name || info->name != backend_name)
    refuse(file, "the module is the backend '" + std::string(info->name ? info->name : "") + "', not '" +
                     backend_name + "'");
  if (!info->build_id || std::strcmp(info->build_id, build_id) != 0)
    refuse(file, "built as '" + std::string(info->build_id ? info->build_id : "") + "', but this libporta is '" +
                     build_id + "': module and library must come from one build");
  if (!info->score || !info->create || !info->destroy) refuse(file, "the module's entry points are incomplete");
}

class ModuleBackend final : public Backend {
 public:
  explicit ModuleBackend(std::string name) : name_(std::move(name)) {}
  ~ModuleBackend() override {
    if (module_.object) module_.destroy(module_.object);
  }

  std::string_view name() const override { return name_; }

  BackendStatus status() override {
    if (Backend* backend = loaded()) return backend->status();
    return {name_, {}, failure_};
  }

  std::shared_ptr<DeviceImpl> open(const DeviceSpec& spec) override {
    if (Backend* backend = loaded()) return backend->open(spec);
    throw Error(ErrorCode::DeviceUnavailable, "device '" + spec.text + "': " + name_ + ": " + failure_);
  }

  TuneReport tune(const DeviceSpec& spec, const TuneSettings& settings) override {
    if (Backend* backend = loaded()) return backend->tune(spec, settings);
    throw Error(ErrorCode::DeviceUnavailable, "device '" + spec.text + "': " + name_ + ": " + failure_);
  }

 private:
  Backend* loaded() {
    std::call_once(once_, [this] { load(); });
    return static_cast<Backend*>(module_.object);
  }

  void load() {
    try {
      module_ = find_module(name_);
    } catch (const Error& e) {
      failure_ = e.what();
    }
  }

  std::string name_;
  std::once_flag once_;
  LoadedModule module_;
  std::string failure_;
};

}  // namespace

std::vector<fs::path> module_search_path() {
  std::vector<fs::path> folders;
  const auto add = [&](const fs::path& folder) {
    if (folder.empty() || !folder.is_absolute()) return;  // never relative to the current directory
    const fs::path clean = folder.lexically_normal();
    if (std::find(folders.begin(), folders.end(), clean) == folders.end()) folders.push_back(clean);
  };
  if (const char* path = std::getenv("PORTA_BACKEND_PATH")) {
    for (std::string_view rest = path; !rest.empty();) {
      const std::size_t colon = rest.find(':');
      add(fs::path(rest.substr(0, colon)));
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    }
  }
  if (const fs::path lib = libporta_folder(); !lib.empty()) add(lib / "porta");
  add(fs::path(PORTA_INSTALL_LIBDIR) / "porta");
  add(executable_folder());
  return folders;
}

LoadedModule load_module(const fs::path& file, const std::string& backend_name) {
  if (const std::string problem = elf_problem(file); !problem.empty()) refuse(file, problem);
  // RTLD_NOW: a missing vendor library or symbol is refused here, not at a later call.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    refuse(file, why ? why : "dlopen failed");
  }
  auto entry = reinterpret_cast<PortaModuleEntry>(dlsym(handle, module_entry_symbol));
  if (!entry)
    refuse(file, std::string("no ") + module_entry_symbol + " entry point: not a porta backend module");
  const PortaModuleInfo* info = entry();
  check_handshake(file, info, backend_name);
  std::array<char, 512> why{};
  if (info->score(why.data(), why.size()) <= 0) refuse(file, "cannot run on this machine: " + std::string(why.data()));
  void* object = nullptr;
  try {
    object = info->create(why.data(), why.size());
  } catch (...) {  // a module that breaks the handshake's rule: create must not throw
    refuse(file, "creating the module's object threw an exception");
  }
  if (!object) refuse(file, "creating the module's object failed: " + std::string(why.data()));
  return {file, object, info->destroy};
}

LoadedModule find_module(const std::string& name) {
  const std::string file_name = "libporta-" + name + ".so";
  std::string searched;
  for (const fs::path& folder : module_search_path()) {
    std::error_code ec;
    if (fs::exists(folder / file_name, ec)) return load_module(folder / file_name, name);
    searched += (searched.empty() ? "" : ", ") + folder.string();
  }
  throw Error(ErrorCode::DeviceUnavailable, "no module " + file_name + " found (searched " +
                                                (searched.empty() ? "no folder" : searched) +
                                                "; PORTA_BACKEND_PATH adds folders)");
}

const void* vendor_module(const std::string& name) {
  struct Entry {
    const void* provider = nullptr;
    std::string failure;
  };
  static std::mutex mutex;
  static std::map<std::string, Entry> loaded;  // never unloaded, as the modules themselves
  const std::lock_guard lock(mutex);
  const auto [it, first] = loaded.try_emplace(name);
  if (first) {
    try {
      it->second.provider = find_module(name).object;
    } catch (const Error& e) {
      it->second.failure = e.what();
    }
  }
  if (!it->second.provider) throw Error(ErrorCode::DeviceUnavailable, it->second.failure);
  return it->second.provider;
}

std::unique_ptr<Backend> make_module_backend(std::string name) {
  return std::make_unique<ModuleBackend>(std::move(name));
}

}  // namespace porta::detail
