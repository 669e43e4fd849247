#pragma once
// Every OpenCL status that is not CL_SUCCESS becomes a porta::Error naming the call and the status.
#include <CL/cl.h>

#include <string>
#include <string_view>

#include "porta/error.hpp"

namespace porta::detail {

std::string_view cl_error_name(cl_int status) noexcept;  // "CL_OUT_OF_RESOURCES", or "CL error -1234"

// Out-of-memory statuses map to OutOfMemory, build failures to BuildFailed, the rest to Internal.
[[noreturn]] void throw_cl_error(std::string_view call, cl_int status, const std::string& detail = {});

inline void check_cl(cl_int status, std::string_view call) {
  if (status != CL_SUCCESS) throw_cl_error(call, status);
}

}  // namespace porta::detail
