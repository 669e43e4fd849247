#include "bench_module.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <vector>

#include <dlfcn.h>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include "bench_module_abi.hpp"
#include "porta/error.hpp"

namespace porta::bench {

void* module_entry(const std::string& name, const char* entry, ModuleSymbols symbols) {
  const std::string file_name = "libporta-bench-" + name + ".so";
  std::string variable = "PORTA_BENCH_" + name + "_MODULE";
  std::transform(variable.begin(), variable.end(), variable.begin(), [](unsigned char c) { return std::toupper(c); });
  std::vector<std::string> files;
  const char* path = std::getenv(variable.c_str());
  const bool named = path != nullptr && *path != '\0';  // set but empty: as if unset
  if (named) {
    files = {path};
  } else {
    // Where the build puts it (build/lib/porta beside build/bench), then where `cmake --install`
    // does (<libdir>/porta beside bin): the same folder where the libdir is lib.
    // Never relative to the working directory: none where the executable's path is unknown.
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::filesystem::path up = exe.parent_path().parent_path();
    if (!ec && up.is_absolute())
      for (const std::filesystem::path& dir : {up / "lib", up / PORTA_INSTALL_LIBDIR})
        if (const std::string file = (dir / "porta" / file_name).string();
            std::find(files.begin(), files.end(), file) == files.end())
          files.push_back(file);
  }
  const auto failure = [&](const std::string& why) {
    return Error(ErrorCode::Unsupported, fmt::format("{} failed to load: {}", file_name, why));
  };
  for (const std::string& file : files) {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) continue;
    void* handle = dlopen(file.c_str(), RTLD_NOW | (symbols == ModuleSymbols::Global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!handle) {
      const char* why = dlerror();
      throw failure(why ? why : file + ": dlopen failed");
    }
    const auto* abi = static_cast<const char*>(dlsym(handle, "porta_bench_module_abi"));
    if (abi == nullptr || std::string_view(abi) != PORTA_BENCH_MODULE_ABI)
      throw failure(fmt::format("{} was built for {}, this porta-bench for {}: use the module of its own build", file,
                                abi ? abi : "no porta-bench (it has no porta_bench_module_abi)",
                                PORTA_BENCH_MODULE_ABI));
    if (void* function = dlsym(handle, entry)) return function;
    throw failure(fmt::format("{} has no {}", file, entry));
  }
  throw failure(fmt::format("no such file: {} ({} {})", fmt::join(files, ", "), variable,
                            named ? "names it" : "may name it where it is elsewhere"));
}

}  // namespace porta::bench
