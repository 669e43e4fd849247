#include "backends/cpu/kernels/cache_sizes.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace porta::detail {
namespace {

// "48K", "1024K", "32M" as written in /sys/devices/system/cpu/cpu0/cache/index*/size.
std::int64_t parse_size(const std::string& text) {
  std::size_t used = 0;
  std::int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (...) {
    return 0;
  }
  const char unit = used < text.size() ? text[used] : ' ';
  return unit == 'K' ? value << 10 : unit == 'M' ? value << 20 : unit == 'G' ? value << 30 : value;
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
  if (from_sysconf > 0) return from_sysconf;
  const std::int64_t from_sysfs = sysfs_cache_size(level);
  return from_sysfs > 0 ? from_sysfs : fallback;
}

#ifdef _SC_LEVEL1_DCACHE_SIZE
constexpr int sc_l1 = _SC_LEVEL1_DCACHE_SIZE, sc_l2 = _SC_LEVEL2_CACHE_SIZE, sc_l3 = _SC_LEVEL3_CACHE_SIZE;
#else
constexpr int sc_l1 = -1, sc_l2 = -1, sc_l3 = -1;
#endif

}  // namespace

const CacheSizes& host_cache_sizes() {
  static const CacheSizes sizes{.l1 = cache_size(1, sc_l1, 32 << 10),
                                .l2 = cache_size(2, sc_l2, 256 << 10),
                                .l3 = cache_size(3, sc_l3, 8 << 20)};
  return sizes;
}

std::int64_t l1_depth_slice(std::int64_t nr, bool a_in_place) {
  const std::int64_t panel_bytes = (a_in_place ? 2 : 1) * nr * std::int64_t{sizeof(float)};
  return std::clamp(host_cache_sizes().l1 / panel_bytes / 16 * 16, std::int64_t{a_in_place ? 64 : 128}, max_depth_slice);
}

}  // namespace porta::detail
