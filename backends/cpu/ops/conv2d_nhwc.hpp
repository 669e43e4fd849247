#pragma once
// Conv2d on NHWC activations (backends/cpu/ops/conv2d.cpp hands these nodes over).
#include "core/runtime/host_backend.hpp"

namespace porta::detail {

void cpu_conv2d_nhwc(const HostOpArgs& args);
std::shared_ptr<const HostNodeState> cpu_prepare_conv2d_nhwc(const Graph& graph, const Node& node);

}  // namespace porta::detail
