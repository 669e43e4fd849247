#pragma once
// Data-cache sizes of the host, read once at run time, for sizing GEMM panels.
#include <cstdint>

namespace porta::detail {

struct CacheSizes {
  std::int64_t l1 = 0, l2 = 0, l3 = 0;  // bytes of data cache per level, as one core sees it
};

// PORTA_CPU_CACHES="L1,L2,L3" (e.g. "48K,1M,32M") where set: for machines that misreport them,
// and for tests of the blocking that smaller caches get. Otherwise
// /sys/devices/system/cpu/cpu0/cache, then sysconf, then typical x86-64 sizes.
// Read once; a malformed PORTA_CPU_CACHES throws InvalidArgument (the cpu device checks it when
// it opens).
const CacheSizes& host_cache_sizes();

inline constexpr std::int64_t max_depth_slice = 512;

// Depth of one micro-kernel call's slice (a multiple of 16, 64 to max_depth_slice): its nr-wide B panel fills
// L1, or half of it where the call reads A's rows in place beside the panel.
std::int64_t l1_depth_slice(std::int64_t nr, bool a_in_place);

// Whether rows of floats this far apart all fall into one L1 set: a multiple of 4 KiB, L1's set
// period on x86 cores (64 sets of 64-byte lines). More such rows read at once than the set has
// ways evict each other before their lines are used up; kernels read fewer of them at once, or
// from a spaced copy.
constexpr bool rows_alias_in_l1(std::int64_t row_floats) { return row_floats * std::int64_t{sizeof(float)} % 4096 == 0; }

}  // namespace porta::detail
