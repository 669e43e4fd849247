// The cpu backend as a run-time module (-DPORTA_BACKEND_MODULES=ON): its entry point.
#include "core/runtime/module_entry.hpp"

namespace porta::detail {
std::unique_ptr<Backend> make_cpu_backend();  // backends/cpu/backend.cpp
}

PORTA_BACKEND_MODULE("cpu", porta::detail::make_cpu_backend)
