#pragma once
// The facts about a machine that the CPU backend's plans are made from: the kernel set that runs,
// the data caches and the threads. The host's are read at run time; tests make up others.
#include <cstdint>
#include <string>
#include <string_view>

#include "backends/cpu/kernels/cache_sizes.hpp"

namespace porta::detail {

struct Machine {
  std::string_view isa = "generic";  // the kernel set, one of cpu_isas
  CacheSizes cache;
  std::int64_t threads = 1;  // of the task arena that runs the plan
};

// This process's: the set of gemm_micro_kernel() (PORTA_CPU_ISA caps it), host_cache_sizes(),
// and the threads of the calling task arena.
Machine host_machine();

// "avx512 14x32": a micro-kernel's set and tile, for the plans' one-line descriptions.
struct MicroKernel;
std::string kernel_name(const MicroKernel& kernel);

}  // namespace porta::detail
