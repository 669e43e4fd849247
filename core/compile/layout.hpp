#pragma once
// Layout assignment, the last pass before memory planning. Each NCHW conv whose device prefers
// NHWC (or CompileOptions::layout asks for it) moves there, and so do the ops that follow a
// channels-last tensor and run in any layout: elementwise ops, pools, global pooling. A transpose
// is inserted only where a channels-last tensor meets an op that needs the graph's own layout
// (a graph output, a reshape, a gemm), or an NCHW tensor meets a channels-last conv; constants
// are permuted once, here. Nodes the device cannot run in NHWC keep the layout they were built in.
#include <span>

#include "core/runtime/backend.hpp"

namespace porta::detail {

Graph assign_layouts(const Graph& graph, std::span<const std::int32_t> order, const DeviceImpl& device,
                     const CompileOptions& options);

// The same pass with every conv moved to NHWC and no device asked: a training graph made so before
// its gradients are taken has channels-last gradients too (autodiff::TrainingOptions::channels_last).
Graph channels_last(const Graph& graph);

}  // namespace porta::detail
