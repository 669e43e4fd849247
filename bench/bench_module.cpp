#include "bench_module.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include <dlfcn.h>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include "porta/error.hpp"

#ifndef PORTA_INSTALL_LIBDIR
#define PORTA_INSTALL_LIBDIR "lib"
#endif

namespace porta::bench {

void* module_entry(const std::string& name, const char* entry, ModuleSymbols symbols) {
  const std::string file_name = "libporta-bench-" + name + ".so";
  std::string variable = "PORTA_BENCH_" + name + "_MODULE";
  std::transform(variable.begin(), variable.end(), variable.begin(), [](unsigned char c) { return std::toupper(c); });
  std::vector<std::string> files;
  const char* path = std::getenv(variable.c_str());
  if (path) {
    files = {path};
  } else {
    // Where the build puts it (build/lib/porta beside build/bench), then where `cmake --install`
    // does (<libdir>/porta beside bin): the same folder where the libdir is lib.
    std::error_code ec;
    const std::filesystem::path up = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path().parent_path();
    for (const std::filesystem::path& dir : {up / "lib", up / PORTA_INSTALL_LIBDIR})
      if (const std::string file = (dir / "porta" / file_name).string();
          std::find(files.begin(), files.end(), file) == files.end())
        files.push_back(file);
  }
  const auto failure = [&](const std::string& why) {
    return Error(ErrorCode::Unsupported, fmt::format("{} failed to load: {}", file_name, why));
  };
  for (const std::string& file : files) {
    if (!std::filesystem::exists(file)) continue;
    void* handle = dlopen(file.c_str(), RTLD_NOW | (symbols == ModuleSymbols::Global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!handle) {
      const char* why = dlerror();
      throw failure(why ? why : file + ": dlopen failed");
    }
    if (void* function = dlsym(handle, entry)) return function;
    throw failure(fmt::format("{} has no {}", file, entry));
  }
  throw failure(fmt::format("no such file: {} ({} {})", fmt::join(files, ", "), variable,
                            path ? "names it" : "may name it where it is elsewhere"));
}

}  // namespace porta::bench
