#pragma once
// Built OpenCL programs, kept in memory for the device's lifetime and as binaries on disk, so a
// second process skips the compiler. Keyed by a hash of the source, the build options and the
// device identity (name, driver version, platform).
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "backends/opencl/cl_device.hpp"

namespace porta::detail {

// Where binaries go: $PORTA_CACHE_DIR/opencl, else $XDG_CACHE_HOME/porta/opencl, else
// ~/.cache/porta/opencl; nullopt when none of those variables is set (memory cache only).
std::optional<std::filesystem::path> default_program_cache_dir();

// A hash that is the same in every process and on every platform (FNV-1a), as 16 hex digits.
std::string stable_hash_hex(std::string_view bytes);

class ProgramCache {
 public:
  struct Stats {
    int memory_hits = 0;
    int disk_loads = 0;      // binaries loaded from the cache directory
    int source_builds = 0;   // programs compiled from source
    int rejected_files = 0;  // corrupt, truncated, stale or unloadable cache files (then rebuilt)
  };

  ProgramCache(const ClDevice& device, std::optional<std::filesystem::path> directory);

  // The built program; throws BuildFailed with the compiler's log when the source does not build.
  ClProgram get(std::string_view source, std::string_view options);

  Stats stats() const;
  std::filesystem::path file_for(std::string_view source, std::string_view options) const;  // empty: no disk cache

 private:
  std::uint64_t key(std::string_view source, std::string_view options) const;
  std::optional<ClProgram> load(const std::filesystem::path& file, std::uint64_t key, std::string_view options);
  ClProgram build(std::string_view source, std::string_view options);
  void store(const std::filesystem::path& file, std::uint64_t key, const ClProgram& program) const;

  const ClDevice& device_;
  std::optional<std::filesystem::path> directory_;
  mutable std::mutex mutex_;
  std::map<std::uint64_t, ClProgram> programs_;
  Stats stats_;
};

}  // namespace porta::detail
