#pragma once
// Turns GPU runtime error codes into porta::Error, naming the call and the device.
#include <string>
#include <string_view>

#include "backends/gpu/compat/compat.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {

std::string error_text(gpuError_t error);  // "cudaErrorNoDevice (no CUDA-capable device is detected)"

// Throws porta::Error(Internal) saying what failed on which device when `error` is not gpuSuccess.
void check(gpuError_t error, std::string_view device, std::string_view what);

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
