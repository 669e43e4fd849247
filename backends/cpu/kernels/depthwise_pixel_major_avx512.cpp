#define PORTA_ISA_TARGET __attribute__((target("avx512f,fma")))
#define PORTA_ISA_VECTOR_FLOATS 16
#define PORTA_ISA_PIXEL_MAJOR avx512_depthwise_pixel_major
#define PORTA_ISA_PIXEL_MAJOR_IN_CACHE false
#include "backends/cpu/kernels/depthwise_pixel_major.inc"
