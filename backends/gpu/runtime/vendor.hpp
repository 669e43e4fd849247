#pragma once
// A GPU backend's vendor library provider (impl=vendor): cuBLASLt, cuBLAS and cuDNN on CUDA. It runs the ops
// its libraries have; porta's kernels run every other op, as with the cpu backend's oneDNN.
#include <memory>
#include <string>

#include "backends/gpu/runtime/node_launch.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {

// The library handles and workspace of one program, bound to its stream.
class VendorSession {
 public:
  virtual ~VendorSession() = default;
  // The library's launch for `node`, or an empty function when porta's kernel runs it.
  virtual NodeLaunch node_launch(const CompiledGraph& graph, const Node& node) = 0;
};

class VendorProvider {
 public:
  virtual ~VendorProvider() = default;
  // Why the library cannot run `node`; empty when it can, or when porta's kernel runs the op.
  virtual std::string unsupported_reason(const Graph& graph, const Node& node, const CompileOptions& options) const = 0;
  virtual std::unique_ptr<VendorSession> session(std::shared_ptr<const DeviceContext> context, gpuStream_t stream,
                                                 const CompileOptions& options) const = 0;
};

// Defined by the build's vendor glue (backends/cuda/vendor) when its libraries were found, which
// the build says to backend.cpp by defining PORTA_GPU_VENDOR.
std::shared_ptr<const VendorProvider> make_vendor_provider(std::shared_ptr<const DeviceContext> context);

// The glue's object in a module build: the <backend>-vendor module, loaded on the first impl=vendor
// use, so that porta's own kernels run where the vendor libraries are missing.
struct VendorFactory {
  std::shared_ptr<const VendorProvider> (*make)(std::shared_ptr<const DeviceContext> context);
};
const VendorFactory& vendor_factory();  // backends/cuda/vendor/module.cpp

}  // namespace porta::detail::PORTA_GPU_NAMESPACE
