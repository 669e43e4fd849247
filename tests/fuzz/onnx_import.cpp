// Fuzzes the ONNX importer with any bytes at all. porta::onnx::load_bytes must return a graph or
// throw porta::Error; a crash, a sanitizer report or any other exception (std::bad_alloc included:
// the importer bounds every allocation by the size of its input, which libFuzzer keeps small) is a bug.
#include <cstddef>
#include <cstdint>
#include <span>

#include "porta/error.hpp"
#include "porta/onnx.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    porta::onnx::load_bytes(std::as_bytes(std::span(data, size)));
  } catch (const porta::Error&) {
    // A clear error is the right answer to a malformed or unsupported model.
  }
  return 0;
}
