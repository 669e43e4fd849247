// The backends compiled into this build. Explicit calls rather than static registration, so the
// order is fixed and nothing depends on static initialisation order or on the linker keeping objects.
#include "core/runtime/backend.hpp"

namespace porta::detail {

std::unique_ptr<Backend> make_ref_backend();
std::unique_ptr<Backend> make_cpu_backend();
#ifdef PORTA_HAVE_OPENCL
std::unique_ptr<Backend> make_opencl_backend();
#endif
#ifdef PORTA_HAVE_CUDA
namespace gpu_cuda {
std::unique_ptr<Backend> make_backend();  // backends/gpu built for CUDA
}
#endif
#ifdef PORTA_HAVE_HIP
namespace gpu_hip {
std::unique_ptr<Backend> make_backend();  // backends/gpu built for HIP
}
#endif

std::span<const std::unique_ptr<Backend>> registry() {
  static const std::vector<std::unique_ptr<Backend>> backends = [] {
    std::vector<std::unique_ptr<Backend>> list;
    list.push_back(make_ref_backend());
    list.push_back(make_cpu_backend());
#ifdef PORTA_HAVE_OPENCL
    list.push_back(make_opencl_backend());
#endif
#ifdef PORTA_HAVE_CUDA
    list.push_back(gpu_cuda::make_backend());
#endif
#ifdef PORTA_HAVE_HIP
    list.push_back(gpu_hip::make_backend());
#endif
    return list;
  }();
  return backends;
}

}  // namespace porta::detail
