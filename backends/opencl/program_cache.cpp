#include "backends/opencl/program_cache.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "backends/opencl/cl_error.hpp"
#include "core/runtime/fault_injection.hpp"

namespace porta::detail {
namespace {

// A cache file: this header, then the binary. The key repeats the file name's hash, so a file
// renamed or left from another device is recognised as stale; the checksum catches truncation.
constexpr std::array<char, 8> file_magic{'P', 'O', 'R', 'T', 'A', 'C', 'L', '1'};
struct FileHeader {
  std::array<char, 8> magic;
  std::uint64_t key;
  std::uint64_t binary_size;
  std::uint64_t checksum;
};

// FNV-1a: stable across processes and platforms, which std::hash is not.
std::uint64_t fnv1a(std::string_view bytes, std::uint64_t hash = 0xcbf29ce484222325ull) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string hex(std::uint64_t value) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) text[static_cast<std::size_t>(i)] = digits[value & 0xf];
  return text;
}

std::string build_log(const ClProgram& program, cl_device_id device) {
  std::size_t size = 0;
  if (clGetProgramBuildInfo(program.get(), device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program.get(), device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS)
    return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  constexpr std::size_t max_log = 16000;  // enough for the first errors; a runaway log stays readable
  if (log.size() > max_log) log = log.substr(0, max_log) + "\n... (build log truncated)";
  return log;
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

std::string stable_hash_hex(std::string_view bytes) { return hex(fnv1a(bytes)); }

std::optional<std::filesystem::path> default_program_cache_dir() {
  if (const std::string dir = env("PORTA_CACHE_DIR"); !dir.empty()) return std::filesystem::path(dir) / "opencl";
  if (const std::string dir = env("XDG_CACHE_HOME"); !dir.empty()) return std::filesystem::path(dir) / "porta" / "opencl";
  if (const std::string home = env("HOME"); !home.empty())
    return std::filesystem::path(home) / ".cache" / "porta" / "opencl";
  return std::nullopt;
}

ProgramCache::ProgramCache(const ClDevice& device, std::optional<std::filesystem::path> directory)
    : device_(device), directory_(std::move(directory)) {}

std::uint64_t ProgramCache::key(std::string_view source, std::string_view options) const {
  std::uint64_t h = fnv1a(source);
  h = fnv1a(std::string_view("\x1f"), h);
  h = fnv1a(options, h);
  h = fnv1a(std::string_view("\x1f"), h);
  return fnv1a(device_.description.identity, h);
}

std::filesystem::path ProgramCache::file_for(std::string_view source, std::string_view options) const {
  return directory_ ? *directory_ / (hex(key(source, options)) + ".clbin") : std::filesystem::path();
}

ProgramCache::Stats ProgramCache::stats() const {
  const std::lock_guard lock(mutex_);
  return stats_;
}

ClProgram ProgramCache::get(std::string_view source, std::string_view options) {
  const std::lock_guard lock(mutex_);  // also keeps two threads from building the same program
  const std::uint64_t k = key(source, options);
  if (const auto it = programs_.find(k); it != programs_.end()) {
    ++stats_.memory_hits;
    return it->second;
  }
  const std::filesystem::path file = file_for(source, options);
  std::optional<ClProgram> program;
  if (!file.empty()) program = load(file, k, options);
  if (program) {
    ++stats_.disk_loads;
  } else {
    program = build(source, options);
    ++stats_.source_builds;
    if (!file.empty()) store(file, k, *program);
  }
  programs_.emplace(k, *program);
  return *program;
}

std::optional<ClProgram> ProgramCache::load(const std::filesystem::path& file, std::uint64_t k,
                                            std::string_view options) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;  // not cached yet: not a rejection
  const auto reject = [&]() -> std::optional<ClProgram> {
    ++stats_.rejected_files;
    return std::nullopt;
  };
  FileHeader header{};
  if (fault::should_fail(fault::Site::FileRead) || !in.read(reinterpret_cast<char*>(&header), sizeof header) ||
      header.magic != file_magic || header.key != k)
    return reject();
  std::error_code ec;
  const auto file_size = std::filesystem::file_size(file, ec);
  if (ec || header.binary_size == 0 || file_size != sizeof header + header.binary_size) return reject();
  std::vector<unsigned char> binary(header.binary_size);
  if (!in.read(reinterpret_cast<char*>(binary.data()), static_cast<std::streamsize>(binary.size())) ||
      fnv1a({reinterpret_cast<const char*>(binary.data()), binary.size()}) != header.checksum)
    return reject();

  const unsigned char* data = binary.data();
  const std::size_t size = binary.size();
  cl_int binary_status = CL_SUCCESS, status = CL_SUCCESS;
  cl_device_id id = device_.id();
  ClProgram program(clCreateProgramWithBinary(device_.context.get(), 1, &id, &size, &data, &binary_status, &status));
  if (status != CL_SUCCESS || binary_status != CL_SUCCESS) return reject();
  // A binary the driver no longer accepts (e.g. after an update that kept its version string)
  // is rebuilt from source like any other bad file.
  const std::string opts(options);
  if (fault::should_fail(fault::Site::ProgramBuild) ||
      clBuildProgram(program.get(), 1, &id, opts.c_str(), nullptr, nullptr) != CL_SUCCESS)
    return reject();
  return program;
}

ClProgram ProgramCache::build(std::string_view source, std::string_view options) {
  const char* text = source.data();
  const std::size_t length = source.size();
  cl_int status = CL_SUCCESS;
  ClProgram program(clCreateProgramWithSource(device_.context.get(), 1, &text, &length, &status));
  check_cl(status, "clCreateProgramWithSource");
  cl_device_id id = device_.id();
  const std::string opts(options);
  status = fault::should_fail(fault::Site::ProgramBuild) ? CL_BUILD_PROGRAM_FAILURE
                                                          : clBuildProgram(program.get(), 1, &id, opts.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS)
    throw Error(ErrorCode::BuildFailed, "OpenCL clBuildProgram failed on '" + device_.info().name + "': " +
                                            std::string(cl_error_name(status)) + " (options '" + opts +
                                            "'); build log:\n" + build_log(program, id));
  return program;
}

// Best effort: a cache that cannot be written (read-only home, full disk) costs only speed, so
// failures here are not errors. The file appears complete or not at all (temp file, then rename).
void ProgramCache::store(const std::filesystem::path& file, std::uint64_t k, const ClProgram& program) const {
  std::size_t size = 0;
  if (clGetProgramInfo(program.get(), CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0)
    return;
  std::vector<unsigned char> binary(size);
  unsigned char* data = binary.data();
  if (clGetProgramInfo(program.get(), CL_PROGRAM_BINARIES, sizeof data, &data, nullptr) != CL_SUCCESS) return;
  const FileHeader header{file_magic, k, size, fnv1a({reinterpret_cast<const char*>(data), size})};

  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  const std::filesystem::path temp =
      file.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&header), sizeof header);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out.flush()) {
      out.close();
      std::filesystem::remove(temp, ec);
      return;
    }
  }
  std::filesystem::rename(temp, file, ec);
  if (ec) std::filesystem::remove(temp, ec);
}

}  // namespace porta::detail
