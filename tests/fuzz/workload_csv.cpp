// Fuzzes porta-bench's workload CSV reader (--workload FILE) with any text at all. It must return
// entries or throw porta::Error; a crash, a sanitizer report or any other exception is a bug.
#include <cstdint>
#include <string_view>

#include "workload_csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    porta::bench::parse_workload_csv({reinterpret_cast<const char*>(data), size}, "fuzz.csv");
  } catch (const porta::Error&) {
    // A clear error is the right answer to a malformed file.
  }
  return 0;
}
