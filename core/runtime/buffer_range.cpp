#include <string>

#include "core/runtime/backend.hpp"
#include "porta/error.hpp"

namespace porta::detail {

void check_buffer_range(std::size_t offset, std::size_t bytes, std::size_t size) {
  if (offset > size || bytes > size - offset)
    throw Error(ErrorCode::Internal, "buffer access [" + std::to_string(offset) + ", +" + std::to_string(bytes) +
                                         ") outside a buffer of " + std::to_string(size) + " bytes");
}

}  // namespace porta::detail
