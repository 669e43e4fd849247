// The backends of this build. Explicit calls rather than static registration, so the order is fixed
// and nothing depends on static initialisation order or on the linker keeping objects. With
// -DPORTA_BACKEND_MODULES=ON every backend but ref is a module, found and loaded on its first use
// (core/runtime/module_loader.hpp).
#include "core/runtime/backend.hpp"
#include "core/runtime/module_loader.hpp"

namespace porta::detail {

std::unique_ptr<Backend> make_ref_backend();
#ifndef PORTA_BACKEND_MODULES
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
#endif

std::span<const std::unique_ptr<Backend>> registry() {
  static const std::vector<std::unique_ptr<Backend>> backends = [] {
    std::vector<std::unique_ptr<Backend>> list;
    list.push_back(make_ref_backend());
#ifdef PORTA_BACKEND_MODULES
    for (const char* name : module_backend_names) list.push_back(make_module_backend(name));
#else
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
#endif
    return list;
  }();
  return backends;
}

Backend& find_backend(const DeviceSpec& spec) {
  std::string known;
  for (const auto& backend : registry()) {
    if (backend->name() == spec.backend) return *backend;
    known += (known.empty() ? "" : ", ") + std::string(backend->name());
  }
  throw Error(ErrorCode::NotFound, "device '" + spec.text + "': backend '" + spec.backend +
                                       "' is not in this build (it has " + known + "; others need -DBACKEND=...)");
}

TuneReport Backend::tune(const DeviceSpec& spec, const TuneSettings&) {
  throw Error(ErrorCode::Unsupported, "device '" + spec.text + "': only opencl devices have kernel parameters to "
                                      "tune; the " + spec.backend + " backend chooses its own");
}

}  // namespace porta::detail
