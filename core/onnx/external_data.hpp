#pragma once
// ONNX external data: an initializer whose bytes lie in a file beside the model (its location, and
// optionally an offset and a length, in the tensor's external_data), as exporters write models of
// more than 2 GB, which one protobuf message cannot hold.
#include <cstdint>
#include <deque>
#include <filesystem>
#include <string>
#include <vector>

#include "core/onnx/model.hpp"

namespace porta::onnx {

// `t` with its raw_data read from `folder`/location into a buffer that `store` keeps. A location
// outside `folder` (absolute, or through ".."), a missing file or a range past its end is an error
// naming `what`.
TensorProto read_external_data(const TensorProto& t, const std::filesystem::path& folder,
                               std::deque<std::vector<std::uint8_t>>& store, const std::string& what);

}  // namespace porta::onnx
