#include "backends/cpu/kernels/cache_sizes.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "porta/error.hpp"

namespace porta::detail {
namespace {

// "48K", "1024K", "32M" as written in /sys/devices/system/cpu/cpu0/cache/index*/size; 0 if it
// is not a positive size of at most 1 TiB.
std::int64_t parse_size(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string_view unit(end, text.data() + text.size() - end);
  const int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
  if (ec != std::errc{} || shift < 0 || value <= 0 || value > (std::int64_t{1} << 40 >> shift)) return 0;
  return value << shift;
}

// The size of the level-`level` data or unified cache in sysfs, 0 if absent.
std::int64_t sysfs_cache_size(int level) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int found_level = 0;
    std::string type, size;
    if (!(level_file >> found_level) || !(type_file >> type) || !(size_file >> size)) break;
    if (found_level == level && type != "Instruction") return parse_size(size);
  }
  return 0;
}

std::int64_t cache_size(int level, int sysconf_name, std::int64_t fallback) {
  const long from_sysconf = sysconf_name >= 0 ? sysconf(sysconf_name) : -1;
  return reported_cache_size(level, sysfs_cache_size(level), from_sysconf, fallback);
}

#ifdef _SC_LEVEL1_DCACHE_SIZE
constexpr int sc_l1 = _SC_LEVEL1_DCACHE_SIZE, sc_l2 = _SC_LEVEL2_CACHE_SIZE, sc_l3 = _SC_LEVEL3_CACHE_SIZE;
#else
constexpr int sc_l1 = -1, sc_l2 = -1, sc_l3 = -1;
#endif

// PORTA_CPU_CACHES="L1,L2,L3", e.g. "48K,1M,32M", in place of what the system reports.
std::optional<CacheSizes> cache_sizes_from_env() {
  const char* value = std::getenv("PORTA_CPU_CACHES");
  if (value == nullptr) return std::nullopt;
  std::array<std::int64_t, 3> sizes{};
  std::string_view rest = value;
  for (std::size_t level = 0; level < sizes.size(); ++level) {
    const std::size_t comma = rest.find(',');
    sizes[level] = parse_size(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (sizes[level] == 0 || (comma == std::string_view::npos) != (level + 1 == sizes.size()))
      throw Error(ErrorCode::InvalidArgument, "PORTA_CPU_CACHES=" + std::string(value) +
                                                  ": expected three sizes, L1,L2,L3, such as 48K,1M,32M");
  }
  return CacheSizes{.l1 = sizes[0], .l2 = sizes[1], .l3 = sizes[2]};
}

CacheSizes system_cache_sizes() {
  if (const auto from_env = cache_sizes_from_env()) return *from_env;
  return {.l1 = cache_size(1, sc_l1, 32 << 10),
          .l2 = cache_size(2, sc_l2, 256 << 10),
          .l3 = cache_size(3, sc_l3, 8 << 20)};
}

}  // namespace

const CacheSizes& host_cache_sizes() {
  static const CacheSizes sizes = system_cache_sizes();
  return sizes;
}

std::int64_t l1_depth_slice(std::int64_t nr) {
  const std::int64_t panel_bytes = nr * std::int64_t{sizeof(float)};
  return std::clamp(host_cache_sizes().l1 / panel_bytes / 16 * 16, std::int64_t{128}, max_depth_slice);
}

}  // namespace porta::detail
