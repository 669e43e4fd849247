#pragma once
// Selects the mapping of the neutral GPU API: the build defines PORTA_GPU_HIP for the HIP backend
// and PORTA_GPU_EMULATION for the CPU tests; otherwise it is CUDA. Every other file of backends/gpu is written against gpu* names
// and lives in namespace porta::detail::PORTA_GPU_NAMESPACE, so that one binary can hold both.
#if defined(PORTA_GPU_HIP)
#include "backends/gpu/compat/hip.hpp"
#elif defined(PORTA_GPU_EMULATION)
#include "backends/gpu/compat/emulation.hpp"
#else
#include "backends/gpu/compat/cuda.hpp"
#endif
