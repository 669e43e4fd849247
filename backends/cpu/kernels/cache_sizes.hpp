#pragma once
// Data-cache sizes of the host, read once at run time, for sizing GEMM panels; cache lines.
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "core/runtime/op_math.hpp"

namespace porta::detail {

struct CacheSizes {
  std::int64_t l1 = 0, l2 = 0, l3 = 0;  // bytes of data cache per level, as one core sees it
};

// PORTA_CPU_CACHES="L1,L2,L3" (e.g. "48K,1M,32M") where set: for machines that misreport them,
// and for tests of the blocking that smaller caches get. Otherwise reported_cache_size's choice
// per level. Read once; a malformed PORTA_CPU_CACHES throws InvalidArgument (the cpu device
// checks it when it opens).
const CacheSizes& host_cache_sizes();

// One level's size from what the system reports (0 or less: not reported): sysfs
// (/sys/devices/system/cpu/cpu0/cache), which gives the cache one core shares with its
// neighbours; else sysconf's, whose L3 is capped at one chiplet's 32 MiB; else `fallback`.
// glibc's sysconf reads CPUID, which on Zen 5 VMs gave the whole multi-chiplet socket's L3
// (384-508 MiB), of which a core reaches only its chiplet's; where sysfs has no cache directory
// (Firecracker guests) nothing else tells, and 508 MiB believed made every layer look
// cache-resident and switched the paths for inputs from memory off (depthwise 8x144x56x56 0.74x
// oneDNN, 1.23x with 32 MiB).
inline constexpr std::int64_t max_l3_from_sysconf = std::int64_t{32} << 20;
constexpr std::int64_t reported_cache_size(int level, std::int64_t from_sysfs, std::int64_t from_sysconf,
                                           std::int64_t fallback) {
  if (from_sysfs > 0) return from_sysfs;
  if (from_sysconf <= 0) return fallback;
  return level == 3 ? std::min(from_sysconf, max_l3_from_sysconf) : from_sysconf;
}

inline constexpr std::int64_t cache_line_bytes = 64;

// Asks for the cache lines of floats [p, p + count), for writing where Write.
template <bool Write = false>
[[gnu::always_inline]] inline void prefetch_floats(const float* p, std::int64_t count) {
  constexpr std::int64_t line_floats = cache_line_bytes / sizeof(float);
  for (std::int64_t i = 0; i < count; i += line_floats) __builtin_prefetch(p + i, Write, 3);
}

// The deepest slice of k one micro-kernel call takes: the GEMM's packed slices, and the
// channels-last and Winograd convolutions' calls, are this deep.
inline constexpr std::int64_t max_depth_slice = 512;

// Depth of one micro-kernel call's slice in the NCHW convolution (a multiple of 16, 128 to
// max_depth_slice): its nr-wide B panel, the input read in place at a shift per step, fills L1.
// 512 deep there, as elsewhere, ran slower on Zen 4 (ResNet-50's 1x1 layers, geometric mean of
// the ratios to oneDNN 1.40 -> 1.39, rows below 1.0 3 -> 9).
std::int64_t l1_depth_slice(std::int64_t nr);

// Whether `rows` rows of floats this far apart, read at once, put more rows into one L1 set than
// it has ways (12 on Zen 5 and recent Intel cores), so that they evict each other before their
// lines are used up. L1's sets repeat every 4 KiB on x86 cores (64 sets of 64-byte lines): rows
// a multiple of 4 KiB apart all fall into one set, rows 2 KiB apart into two, and so on. Kernels
// then read fewer rows at once, or from a spaced copy.
constexpr bool rows_alias_in_l1(std::int64_t rows, std::int64_t row_floats) {
  constexpr std::int64_t set_period = 4096, ways = 12;
  const std::int64_t sets =
      set_period / std::max(std::gcd(row_floats * std::int64_t{sizeof(float)}, set_period), cache_line_bytes);
  return ceil_div(rows, sets) > ways;
}

}  // namespace porta::detail
