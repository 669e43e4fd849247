// porta.h: status codes, this thread's last error, and the helpers every area of the C API shares.
#include <string>

#include "core/c_api/handles.hpp"

namespace porta::c_api {

namespace {
thread_local std::string last_error;
}  // namespace

void set_last_error(ErrorCode code, std::string_view message) noexcept {
  try {
    last_error = std::string(to_string(code)) + ": " + std::string(message);
  } catch (...) {
    last_error.clear();  // no memory for the message: the status alone says what failed
  }
}

porta_tensor_desc to_c(const TensorDesc& desc) {
  porta_tensor_desc out{};
  out.dtype = static_cast<porta_dtype>(desc.dtype);
  out.rank = desc.shape.size();
  for (std::size_t i = 0; i < desc.shape.size() && i < PORTA_MAX_RANK; ++i) out.shape[i] = desc.shape[i];
  return out;
}

Shape to_shape(const std::int64_t* dims, std::size_t rank, const char* what) {
  if (dims == nullptr && rank > 0) invalid(std::string(what) + " is NULL with " + std::to_string(rank) + " dims");
  return rank == 0 ? Shape{} : Shape(dims, dims + rank);
}

}  // namespace porta::c_api

// Every status code is the porta::ErrorCode of the same value.
static_assert(PORTA_INVALID_ARGUMENT == static_cast<int>(porta::ErrorCode::InvalidArgument));
static_assert(PORTA_INTERNAL == static_cast<int>(porta::ErrorCode::Internal));
static_assert(PORTA_IO_ERROR == static_cast<int>(porta::ErrorCode::IoError));

extern "C" {

const char* porta_last_error(void) { return porta::c_api::last_error.c_str(); }

const char* porta_status_string(porta_status status) {
  const long long code = porta::c_api::raw_enum(status);
  if (code == PORTA_OK) return "ok";
  if (code < PORTA_INVALID_ARGUMENT || code > PORTA_INTERNAL) return "unknown status";
  // to_string's views are of string literals, so NUL-terminated.
  return porta::to_string(static_cast<porta::ErrorCode>(code)).data();
}

size_t porta_dtype_size(porta_dtype dtype) {
  const long long t = porta::c_api::raw_enum(dtype);
  return t >= PORTA_F32 && t <= PORTA_BOOL ? porta::size_of(static_cast<porta::DType>(t)) : 0;
}

}  // extern "C"
