#include "backends/gpu/runtime/check.hpp"

#include "porta/error.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {

std::string error_text(gpuError_t error) {
  return std::string(gpuGetErrorName(error)) + " (" + gpuGetErrorString(error) + ")";
}

void check(gpuError_t error, std::string_view device, std::string_view what) {
  if (error == gpuSuccess) return;
  throw Error(ErrorCode::Internal, std::string(device) + ": " + std::string(what) + " failed: " + error_text(error));
}

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
