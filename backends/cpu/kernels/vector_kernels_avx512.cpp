#define PORTA_ISA_TARGET __attribute__((target("avx512f,fma")))
#define PORTA_ISA_KERNELS avx512_vector_kernels
#define PORTA_ISA_VECTOR_FLOATS 16
#define PORTA_ISA_MULTIPLY_ADD _mm512_fmadd_ps
#include <immintrin.h>

#include "backends/cpu/kernels/vector_kernels.inc"
