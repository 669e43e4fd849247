#pragma once
// The graph-level passes that run before memory planning, each a rebuild of the graph:
//  - x * sigmoid(x) becomes silu(x), as ONNX exports spell it;
//  - a batchnorm after a conv with constant weights folds into the conv's weights and bias;
//  - a residual add and an activation after a conv (or an activation after a gemm) move into
//    its epilogue, where the device says it can run the fused node;
//  - convs move to the layout the device prefers (core/compile/layout.hpp).
#include <span>

#include "core/runtime/backend.hpp"

namespace porta::detail {

Graph optimize(const Graph& graph, std::span<const std::int32_t> order, const DeviceImpl& device,
               const CompileOptions& options);

}  // namespace porta::detail
