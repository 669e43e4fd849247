// The opencl backend as a run-time module (-DPORTA_BACKEND_MODULES=ON): its entry point.
#include "core/runtime/module_entry.hpp"

namespace porta::detail {
std::unique_ptr<Backend> make_opencl_backend();  // backends/opencl/backend.cpp
}

PORTA_BACKEND_MODULE("opencl", porta::detail::make_opencl_backend)
