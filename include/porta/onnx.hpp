#pragma once
// ONNX import and export. Import: a .onnx model becomes a porta::Graph. Inputs keep the model's
// names, initializers become constants and the model's outputs are marked as graph outputs.
//
// The protobuf decoder is porta's own and checks every length and count against the bytes it was
// given: malformed or truncated input is a porta::Error (InvalidArgument, naming the byte offset or
// the node), never a crash. Ops outside the supported set give one Unsupported error listing every
// such node. See docs/onnx.md for the op list.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "porta/graph.hpp"

namespace porta::onnx {

struct LoadOptions {
  // Value for a symbolic (dim_param) or unknown leading dimension of every input.
  std::int64_t batch = 1;
  // Full shapes for named inputs; they replace what the model declares.
  std::map<std::string, Shape, std::less<>> input_shapes;
};

// Throws IoError when the file cannot be read.
Graph load(const std::filesystem::path& path, const LoadOptions& options = {});
// Any bytes at all: the only exceptions are porta::Error and, for a model too large for memory,
// std::bad_alloc; every allocation is bounded by the size of `bytes`.
Graph load_bytes(std::span<const std::byte> bytes, const LoadOptions& options = {});

// Export: the graph as an opset-13 model that porta's import and other runtimes (ONNX Runtime) run
// as the same computation, constants as initializers, inputs dense whatever their strides. What
// opset 13 cannot say the way porta writes it (backward ops, NHWC convs and pools, a dilated average pool)
// is Unsupported, naming the node; IoError when the file cannot be written.
std::vector<std::byte> save_bytes(const Graph& graph);
void save(const Graph& graph, const std::filesystem::path& path);

}  // namespace porta::onnx
