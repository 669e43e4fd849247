#include "backends/cpu/kernels/activation_run.hpp"

namespace porta::detail {
namespace {

__attribute__((target("avx2,fma"))) void sigmoid(float* y, std::int64_t count) {
  activation_run_body(y, count, sigmoid_fast);
}
__attribute__((target("avx2,fma"))) void silu(float* y, std::int64_t count) { activation_run_body(y, count, silu_fast); }

}  // namespace

ActivationRuns avx2_activation_runs() { return {sigmoid, silu}; }

}  // namespace porta::detail
