#include "backends/cpu/plans/machine.hpp"

#include <tbb/task_arena.h>

#include "backends/cpu/kernels/micro_kernel.hpp"

namespace porta::detail {

Machine host_machine() {
  return {gemm_micro_kernel().isa, host_cache_sizes(), tbb::this_task_arena::max_concurrency()};
}

std::string kernel_name(const MicroKernel& kernel) {
  return std::string(kernel.isa) + " " + std::to_string(kernel.mr) + "x" + std::to_string(kernel.nr);
}

}  // namespace porta::detail
