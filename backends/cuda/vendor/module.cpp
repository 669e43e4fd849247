// cuBLASLt, cuBLAS and cuDNN as a run-time module (-DPORTA_BACKEND_MODULES=ON), loaded by the cuda
// backend on the first impl=vendor use: porta's own CUDA kernels run where they are missing.
#include "backends/gpu/runtime/vendor.hpp"
#include "core/runtime/module_entry.hpp"

namespace porta::detail::gpu_cuda {

const VendorFactory& vendor_factory() {
  static const VendorFactory factory{.make = make_vendor_provider};
  return factory;
}

}  // namespace porta::detail::gpu_cuda

PORTA_VENDOR_MODULE("cuda-vendor", porta::detail::gpu_cuda::vendor_factory)
