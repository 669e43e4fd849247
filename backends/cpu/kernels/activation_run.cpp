#include "backends/cpu/kernels/activation_run.hpp"

#include <string_view>

#include "backends/cpu/kernels/micro_kernel.hpp"

namespace porta::detail {
namespace {

void sigmoid(float* y, std::int64_t count) { activation_run_body(y, count, sigmoid_fast); }
void silu(float* y, std::int64_t count) { activation_run_body(y, count, silu_fast); }

ActivationRuns choose() {
#if defined(__x86_64__)
  const std::string_view isa = gemm_micro_kernel().isa;
  if (isa == "avx512") return avx512_activation_runs();
  if (isa == "avx2") return avx2_activation_runs();
#endif
  return {sigmoid, silu};
}

}  // namespace

ActivationRunFn activation_run(Activation act) {
  static const ActivationRuns chosen = choose();
  return act == Activation::Sigmoid ? chosen.sigmoid : chosen.silu;
}

}  // namespace porta::detail
