#pragma once
// The opencl backend's vendor library provider (impl=vendor), CLBlast, as one object: linked in,
// or in a module build the opencl-clblast module's, so that the backend loads without CLBlast.
#include <string>

#include "backends/opencl/ops/ops.hpp"

namespace porta::detail {

struct ClVendorProvider {
  // Why the library cannot run `node`, or empty (also for the ops porta's kernels run).
  std::string (*unsupported_reason)(const Graph& graph, const Node& node);
  OpenClOp (*op)(OpKind op);  // the library's launcher for `op` where it has one, porta's otherwise
};

const ClVendorProvider& clblast_provider();  // backends/opencl/vendor/clblast_provider.cpp

// The build's provider, loaded on the first call in a module build: null when the build has none;
// throws DeviceUnavailable when its module cannot load (backends/opencl/backend.cpp).
const ClVendorProvider* opencl_vendor_provider();

}  // namespace porta::detail
