#pragma once
// Data-cache sizes of the host, read once at run time, for sizing GEMM panels.
#include <cstdint>

namespace porta::detail {

struct CacheSizes {
  std::int64_t l1 = 0, l2 = 0, l3 = 0;  // bytes of data cache per level, as one core sees it
};

// sysconf first, then /sys/devices/system/cpu/cpu0/cache, then typical x86-64 sizes.
const CacheSizes& host_cache_sizes();

}  // namespace porta::detail
