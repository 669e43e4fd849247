#pragma once
// A test hook that makes the Nth occurrence of one kind of fallible operation fail, so tests can
// prove that every failure path surfaces as a porta::Error, leaks nothing and leaves the device
// usable. Always compiled in; unarmed (the normal state) it costs one relaxed atomic load per site.
#include <atomic>

namespace porta::detail::fault {

enum class Site {
  DeviceAllocation,  // a buffer in device memory (OpenCL, CUDA, HIP)
  HostAllocation,    // host memory porta allocates: host devices' arena and constants, CPU scratch
  ProgramBuild,      // a kernel program build (OpenCL, from source or from a cached binary)
  FileRead,          // reading a file (the OpenCL program cache)
};

extern std::atomic<bool> armed;  // defined once, in libporta: backend modules share it

bool fail_now(Site site) noexcept;  // counts this occurrence and says whether it is the chosen one

// True when this occurrence of `site` must fail; each site calls it just before the real operation.
inline bool should_fail(Site site) noexcept {
  return armed.load(std::memory_order_relaxed) && fail_now(site);
}

// Tests only: the `nth` (from 1) next occurrence of `site` fails. Occurrences on every thread count.
void arm(Site site, long nth) noexcept;
void disarm() noexcept;
bool fired() noexcept;  // whether the armed failure has happened since arm()

}  // namespace porta::detail::fault
