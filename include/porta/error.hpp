#pragma once
// porta::Error is the only way the library reports failure: it never aborts, exits or prints.
#include <stdexcept>
#include <string>
#include <string_view>

namespace porta {

// The values are the C API's status codes (porta.h), where 0 is success.
enum class ErrorCode {
  InvalidArgument = 1,  // a value the caller passed is out of range or malformed
  ShapeMismatch,        // tensor shapes do not fit the op
  DTypeMismatch,        // tensor dtypes do not fit the op
  Overflow,             // a size or element count does not fit in 64 bits
  NotFound,             // a named tensor, device or backend does not exist
  Unsupported,          // valid, but not implemented on this backend or device
  DeviceUnavailable,    // the backend is compiled in but has no usable device
  OutOfMemory,          // an allocation failed
  BuildFailed,          // a kernel or program failed to compile
  IoError,              // a file could not be read or written
  Internal,             // a bug in porta: please report it
};

std::string_view to_string(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  // Out of line, so that Error's type identity lives once, in libporta, for the backend modules too.
  ~Error() override;
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace porta
