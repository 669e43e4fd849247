#pragma once
// A vendor runtime opened at run time (dlopen), never linked: its functions by name, with the
// loader's words where the library or a function is missing.
#include <dlfcn.h>

#include <string>

#include "porta/error.hpp"

namespace porta::bench {

class RuntimeLibrary {
 public:
  // Kept open for the program's life: the runtimes' own threads and atexit handlers outlive any scope.
  RuntimeLibrary(const char* file, const std::string& what) : file_(file) {
    handle_ = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* why = dlerror();
      throw Error(ErrorCode::Unsupported, what + " is not available: " + (why ? why : file));
    }
  }
  template <class F>
  F get(const char* name) const {
    void* f = dlsym(handle_, name);
    if (!f) throw Error(ErrorCode::Unsupported, std::string(file_) + " has no " + name);
    return reinterpret_cast<F>(f);
  }

 private:
  const char* file_;
  void* handle_ = nullptr;
};

// The exported name of a function the headers may rename (cuMemAlloc is cuMemAlloc_v2).
#define PORTA_BENCH_NAME_OF(f) PORTA_BENCH_STRING(f)
#define PORTA_BENCH_STRING(f) #f

}  // namespace porta::bench
