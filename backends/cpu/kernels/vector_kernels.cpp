// The baseline (x86-64 SSE2, or any other CPU) set, and the choice between the sets.
#define PORTA_ISA_TARGET
#define PORTA_ISA_KERNELS generic_vector_kernels
#define PORTA_ISA_VECTOR_FLOATS 4
#define PORTA_ISA_MULTIPLY_ADD(a, b, c) ((a) * (b) + (c))  // x86-64's baseline has no FMA
#include "backends/cpu/kernels/vector_kernels.inc"

#include <string_view>
#include <utility>
#include <vector>

#include "backends/cpu/kernels/micro_kernel.hpp"

namespace porta::detail {
namespace {

VectorKernels kernels_of([[maybe_unused]] std::string_view isa) {
#if defined(PORTA_CPU_AVX512)
  if (isa == "avx512") {
    VectorKernels avx512 = avx512_vector_kernels();
    avx512.depthwise_pixel_major = avx512_depthwise_pixel_major;
    avx512.depthwise_rows_stride2_streamed = avx512_depthwise_rows_stride2_streamed;
    return avx512;
  }
#endif
#if defined(PORTA_CPU_AVX2)
  if (isa == "avx2") {
    VectorKernels avx2 = avx2_vector_kernels();
    avx2.depthwise_pixel_major = avx2_depthwise_pixel_major;
    return avx2;
  }
#endif
  return generic_vector_kernels();
}

}  // namespace

const VectorKernels& vector_kernels_for(std::string_view isa) {
  static const VectorKernels avx512 = kernels_of("avx512"), avx2 = kernels_of("avx2"), generic = kernels_of("generic");
  return isa == "avx512" && isa_built(isa) ? avx512 : isa == "avx2" && isa_built(isa) ? avx2 : generic;
}

const VectorKernels& vector_kernels() {
  static const VectorKernels& chosen = vector_kernels_for(gemm_micro_kernel().isa);
  return chosen;
}

std::vector<std::pair<std::string_view, VectorKernels>> runnable_vector_kernels() {
  std::vector<std::pair<std::string_view, VectorKernels>> all;
  for (const std::string_view isa : cpu_isas)
    if (isa_runs(isa)) all.emplace_back(isa, kernels_of(isa));
  return all;
}

ActivationRunFn activation_run(Activation act) {
  switch (act) {
    case Activation::Sigmoid: return vector_kernels().sigmoid;
    case Activation::Silu: return vector_kernels().silu;
    case Activation::Tanh: return vector_kernels().tanh;
    case Activation::Gelu: return vector_kernels().gelu;
    default: return nullptr;
  }
}

}  // namespace porta::detail
