// The baseline (x86-64 SSE2, or any other CPU) set, and the choice between the sets.
#define PORTA_ISA_TARGET
#define PORTA_ISA_KERNELS generic_vector_kernels
#define PORTA_ISA_VECTOR_FLOATS 4
#include "backends/cpu/kernels/vector_kernels.inc"

#include <string_view>

#include "backends/cpu/kernels/micro_kernel.hpp"

namespace porta::detail {
namespace {

VectorKernels choose() {
#if defined(__x86_64__)
  const std::string_view isa = gemm_micro_kernel().isa;
  if (isa == "avx512") return avx512_vector_kernels();
  if (isa == "avx2") return avx2_vector_kernels();
#endif
  return generic_vector_kernels();
}

}  // namespace

const VectorKernels& vector_kernels() {
  static const VectorKernels chosen = choose();
  return chosen;
}

ActivationRunFn activation_run(Activation act) {
  return act == Activation::Sigmoid ? vector_kernels().sigmoid : vector_kernels().silu;
}

}  // namespace porta::detail
