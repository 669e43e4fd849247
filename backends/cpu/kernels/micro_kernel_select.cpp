#include <cstdlib>
#include <string_view>

#include "backends/cpu/kernels/micro_kernel.hpp"

namespace porta::detail {
namespace {

bool cpu_has(std::string_view isa) {
#if defined(__x86_64__)
  if (isa == "avx512") return __builtin_cpu_supports("avx512f");
  if (isa == "avx2") return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  return isa == "generic";
}

MicroKernel choose() {
  const char* cap = std::getenv("PORTA_CPU_ISA");
  const std::string_view limit = cap ? cap : "avx512";
  const bool allow_avx512 = limit == "avx512";
  const bool allow_avx2 = allow_avx512 || limit == "avx2";
#if defined(__x86_64__)
  if (allow_avx512 && cpu_has("avx512")) return avx512_micro_kernel();
  if (allow_avx2 && cpu_has("avx2")) return avx2_micro_kernel();
#endif
  return generic_micro_kernel();
}

}  // namespace

const MicroKernel& gemm_micro_kernel() {
  static const MicroKernel chosen = choose();
  return chosen;
}

const MicroKernel* gemm_narrow_micro_kernel() {
#if defined(__x86_64__)
  static const MicroKernel narrow = avx512_narrow_micro_kernel();
  if (gemm_micro_kernel().isa == "avx512") return &narrow;
#endif
  return nullptr;
}

const MicroKernel& gemm_micro_kernel_for(std::int64_t columns) {
  const MicroKernel* narrow = gemm_narrow_micro_kernel();
  return narrow && columns <= narrow->nr ? *narrow : gemm_micro_kernel();
}

}  // namespace porta::detail
