#define PORTA_ISA_TARGET __attribute__((target("avx2,fma")))
#define PORTA_ISA_KERNELS avx2_vector_kernels
#define PORTA_ISA_VECTOR_FLOATS 8
#define PORTA_ISA_MULTIPLY_ADD _mm256_fmadd_ps
#include <immintrin.h>

#include "backends/cpu/kernels/vector_kernels.inc"
