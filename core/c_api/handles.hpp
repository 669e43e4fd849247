#pragma once
// What the C API's opaque handles hold, and the guard every function of porta.h runs its body in:
// it turns any exception into a status and this thread's last error, so none crosses into C.
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "porta/porta.h"
#include "porta/porta.hpp"

// A live handle carries its kind's magic; free clears it, so a handle used after free is caught
// while its memory is not reused (and AddressSanitizer catches every such use).
struct porta_graph {
  static constexpr std::uint32_t live = 0x47524150u;  // "GRAP"
  std::uint32_t magic = live;
  porta::Graph graph;
};

struct porta_device {
  static constexpr std::uint32_t live = 0x44455649u;  // "DEVI"
  std::uint32_t magic = live;
  porta::Device device;
};

struct porta_executable {
  static constexpr std::uint32_t live = 0x45584543u;  // "EXEC"
  std::uint32_t magic = live;
  porta::Executable exe;
};

namespace porta::c_api {

void set_last_error(ErrorCode code, std::string_view message) noexcept;

[[noreturn]] inline void invalid(const std::string& message) { throw Error(ErrorCode::InvalidArgument, message); }

// The object a handle holds, or InvalidArgument for NULL or a handle that is not live.
template <class Handle>
auto& get(Handle* handle, const char* what) {
  using Plain = std::remove_const_t<Handle>;
  if (handle == nullptr) invalid(std::string(what) + " is NULL");
  if (handle->magic != Plain::live) invalid(std::string(what) + " is not a live handle (freed, or not one of porta's)");
  if constexpr (std::is_same_v<Plain, porta_graph>) return handle->graph;
  else if constexpr (std::is_same_v<Plain, porta_device>) return handle->device;
  else return handle->exe;
}

// An output pointer the caller must pass.
template <class T>
T& out_ref(T* out, const char* what) {
  if (out == nullptr) invalid(std::string(what) + " is NULL");
  return *out;
}

// A string the caller must pass, or, with optional, NULL as empty.
inline std::string text(const char* s, const char* what) {
  if (s == nullptr) invalid(std::string(what) + " is NULL");
  return s;
}
inline std::string optional_text(const char* s) { return s == nullptr ? std::string() : std::string(s); }

// A versioned parameter struct: NULL means the defaults; otherwise its size field must be the size
// this library knows.
template <class Params>
Params params_or(const Params* p, Params defaults, const char* what) {
  if (p == nullptr) return defaults;
  if (p->size != sizeof(Params))
    invalid(std::string(what) + ".size is " + std::to_string(p->size) + ", expected " +
            std::to_string(sizeof(Params)) + ": start from its _default() function");
  return *p;
}

// Frees a handle that is NULL or live; any other value is left alone.
template <class Handle>
void free_handle(Handle* handle) noexcept {
  if (handle == nullptr || handle->magic != Handle::live) return;
  handle->magic = 0;
  delete handle;
}

// Runs `body`, turning every exception into a status and this thread's message.
template <class Body>
porta_status guard(Body&& body) noexcept {
  try {
    std::forward<Body>(body)();
    return PORTA_OK;
  } catch (const Error& e) {
    set_last_error(e.code(), e.what());
    return static_cast<porta_status>(e.code());
  } catch (const std::bad_alloc&) {
    set_last_error(ErrorCode::OutOfMemory, "out of memory");
    return PORTA_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(ErrorCode::Internal, e.what());
  } catch (...) {
    set_last_error(ErrorCode::Internal, "an unknown exception");
  }
  return PORTA_INTERNAL;
}

// The integer a C caller passed as an enum: read as bytes, since C++ may not load a value outside the
// enum's range as the enum itself, and a C caller may pass any int. Enums are taken by reference until here.
template <class CEnum>
long long raw_enum(const CEnum& value) {
  std::underlying_type_t<CEnum> v;
  std::memcpy(&v, &value, sizeof v);
  return static_cast<long long>(v);
}

// A C enum value as the C++ enum of the same values, or InvalidArgument when out of range.
template <class Enum, class CEnum>
Enum enum_of(const CEnum& value, Enum last, const char* what) {
  const long long v = raw_enum(value);
  if (v < 0 || v > static_cast<long long>(last))
    invalid(std::string(what) + " is " + std::to_string(v) + ", not one of porta.h's values");
  return static_cast<Enum>(v);
}
inline DType dtype_of(const porta_dtype& d) { return enum_of(d, DType::boolean, "dtype"); }

inline Tensor tensor_of(porta_tensor t) { return Tensor{t.id}; }

// Copies a C++ tensor description into the C one.
porta_tensor_desc to_c(const TensorDesc& desc);
Shape to_shape(const std::int64_t* dims, std::size_t rank, const char* what);

}  // namespace porta::c_api
