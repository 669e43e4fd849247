// The cuda or hip backend as a run-time module (-DPORTA_BACKEND_MODULES=ON): its entry point.
#include "backends/gpu/compat/compat.hpp"
#include "core/runtime/module_entry.hpp"

namespace porta::detail::PORTA_GPU_NAMESPACE {
std::unique_ptr<Backend> make_backend();  // backends/gpu/backend.cpp
}

PORTA_BACKEND_MODULE(PORTA_GPU_BACKEND_NAME, porta::detail::PORTA_GPU_NAMESPACE::make_backend)
