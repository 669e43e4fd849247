#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "backends/cpu/kernels/micro_kernel.hpp"
#include "porta/error.hpp"

namespace porta::detail {
namespace {

// The kernels of `isa`, a set this build has.
KernelSet set_of([[maybe_unused]] std::string_view isa) {
#if defined(PORTA_CPU_AVX512)
  if (isa == "avx512") {
    return {avx512_micro_kernel(),
            avx512_narrow_micro_kernel(),
            avx512_aliasing_micro_kernel(false),
            avx512_aliasing_micro_kernel(true),
            {avx512_seven_row_micro_kernel()},
            avx512_pointwise_micro_kernel(),
            {avx512_four_row_micro_kernel(false), avx512_four_row_micro_kernel(true)}};
  }
#endif
  // The AVX2 and generic kernels read at most 6 rows: fewer than any L1 set has ways.
#if defined(PORTA_CPU_AVX2)
  if (isa == "avx2") {
    const MicroKernel avx2 = avx2_micro_kernel();
    return {avx2, avx2, avx2, avx2, {avx2_three_vector_micro_kernel()}, std::nullopt, {}};
  }
#endif
  const MicroKernel generic = generic_micro_kernel();
  return {generic, generic, generic, generic, {}, std::nullopt, {}};
}

// The widest set this build has and this CPU runs, at most PORTA_CPU_ISA's.
std::string_view choose() {
  const char* cap = std::getenv("PORTA_CPU_ISA");
  const std::string_view limit = cap ? cap : cpu_isas[0];
  const auto* const first = std::ranges::find(cpu_isas, limit);
  if (first == std::end(cpu_isas))
    throw Error(ErrorCode::InvalidArgument, "PORTA_CPU_ISA=" + std::string(limit) + ": expected avx512, avx2 or generic");
  return *std::find_if(first, std::end(cpu_isas), isa_runs);  // generic always runs
}

}  // namespace

bool isa_built(std::string_view isa) {
#if defined(PORTA_CPU_AVX512)
  if (isa == "avx512") return true;
#endif
#if defined(PORTA_CPU_AVX2)
  if (isa == "avx2") return true;
#endif
  return isa == "generic";
}

bool isa_runs(std::string_view isa) {
#if defined(PORTA_CPU_AVX512)
  if (isa == "avx512") return __builtin_cpu_supports("avx512f");
#endif
#if defined(PORTA_CPU_AVX2)
  if (isa == "avx2") return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  return isa == "generic";
}

const KernelSet& kernel_set(std::string_view isa) {
  static const KernelSet avx512 = set_of("avx512"), avx2 = set_of("avx2"), generic = set_of("generic");
  return isa == "avx512" && isa_built(isa) ? avx512 : isa == "avx2" && isa_built(isa) ? avx2 : generic;
}

const KernelSet& host_kernel_set() {
  static const KernelSet& chosen = kernel_set(choose());
  return chosen;
}

std::vector<MicroKernel> runnable_micro_kernels() {
  std::vector<MicroKernel> all;
  const auto add = [&all](const MicroKernel& kernel) {  // once each: AVX2's set is one kernel four times
    if (std::ranges::none_of(all, [&](const MicroKernel& k) { return k.run_columns_a == kernel.run_columns_a; }))
      all.push_back(kernel);
  };
  for (const std::string_view isa : cpu_isas) {
    if (!isa_runs(isa)) continue;
    const KernelSet& set = kernel_set(isa);
    for (const MicroKernel& kernel : {set.wide, set.narrow, set.wide_aliasing, set.narrow_aliasing}) add(kernel);
    for (const MicroKernel& kernel : set.for_filters) add(kernel);
    if (set.pointwise) add(*set.pointwise);
    for (const MicroKernel& kernel : set.four_row) add(kernel);
  }
  return all;
}

const MicroKernel* KernelSet::pointwise_panels(std::int64_t columns) const {
  return pointwise && columns % pointwise->nr == 0 ? &*pointwise : nullptr;
}

const MicroKernel& KernelSet::for_columns(std::int64_t columns, bool fewer_rows) const {
  const bool is_narrow = columns <= narrow.nr;
  if (fewer_rows) return is_narrow ? narrow_aliasing : wide_aliasing;
  return is_narrow ? narrow : wide;
}

const MicroKernel& KernelSet::for_gemm(std::int64_t columns, bool a_in_place, bool fewer_rows, bool a_streamed) const {
  constexpr std::int64_t three_panels = 48;  // of the narrow kernel; AVX-512's 7x48 in one
  if (const MicroKernel* one_pass = pointwise_panels(columns); a_streamed && one_pass) return *one_pass;
  if (columns <= wide.nr || columns > three_panels) return for_columns(columns, fewer_rows);
  if (a_in_place)
    for (const MicroKernel& kernel : for_filters)
      if (kernel.nr == three_panels) return kernel;
  return fewer_rows ? narrow_aliasing : narrow;
}

const MicroKernel& KernelSet::for_last_panel(const MicroKernel& kernel, std::int64_t rows) const {
  const MicroKernel* best = &kernel;
  const auto consider = [&](const MicroKernel& fewer) {
    if (fewer.nr == kernel.nr && fewer.mr < best->mr && fewer.mr >= rows) best = &fewer;
  };
  consider(wide_aliasing);
  consider(narrow_aliasing);
  for (const MicroKernel& fewer : four_row) consider(fewer);
  return *best;
}

const MicroKernel& KernelSet::for_filters_of(std::int64_t filters, std::int64_t rows, bool is_pointwise,
                                             bool streams) const {
  const MicroKernel* one_pass = pointwise_panels(filters);
  if (is_pointwise && one_pass && (streams || filters == one_pass->nr)) return *one_pass;
  // On a tie, a kernel that needs no tail panel: 14x16 loads more per multiply than the wide
  // kernels (8x24x56x56->144 ran 7-10 % slower as 14x32 with one than as 7x48). Then the wider
  // panels, which pass fewer times over each output pixel: 7x48 against 14x32 for 96 filters
  // over 8x16x112x112 +11 % (1 thread) and +19 % (2) against oneDNN, for 480 and 672 over 14x14
  // images +0.5-3 %.
  const auto cost = [&](const MicroKernel& k) {
    const std::int64_t left = filters % k.nr;
    return std::tuple{computed_by(k, filters, rows), left > 0 && left <= k.tail_nr, -k.nr};
  };
  const MicroKernel* best = &for_columns(filters);
  for (const MicroKernel& kernel : for_filters)
    if (cost(kernel) < cost(*best)) best = &kernel;
  return *best;
}

const MicroKernel& gemm_micro_kernel() { return host_kernel_set().wide; }

const MicroKernel& gemm_micro_kernel_for(std::int64_t columns, bool fewer_rows) {
  return host_kernel_set().for_columns(columns, fewer_rows);
}

const MicroKernel& gemm_kernel_for(std::int64_t columns, bool a_in_place, bool fewer_rows, bool a_streamed) {
  return host_kernel_set().for_gemm(columns, a_in_place, fewer_rows, a_streamed);
}

const MicroKernel& gemm_last_panel_kernel(const MicroKernel& kernel, std::int64_t rows) {
  return host_kernel_set().for_last_panel(kernel, rows);
}

const MicroKernel& filter_micro_kernel_for(std::int64_t filters, std::int64_t rows, bool pointwise, bool streams) {
  return host_kernel_set().for_filters_of(filters, rows, pointwise, streams);
}

}  // namespace porta::detail
