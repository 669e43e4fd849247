#define PORTA_ISA_TARGET __attribute__((target("avx2,fma")))
#define PORTA_ISA_VECTOR_FLOATS 8
#define PORTA_ISA_PIXEL_MAJOR avx2_depthwise_pixel_major
#define PORTA_ISA_PIXEL_MAJOR_IN_CACHE true
#include "backends/cpu/kernels/depthwise_pixel_major.inc"
