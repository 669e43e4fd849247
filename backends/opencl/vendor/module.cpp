// CLBlast's provider as a run-time module (-DPORTA_BACKEND_MODULES=ON), loaded by the opencl backend
// on the first impl=vendor use: the opencl backend runs on machines without CLBlast.
#include "backends/opencl/vendor/provider.hpp"
#include "core/runtime/module_entry.hpp"

PORTA_VENDOR_MODULE("opencl-clblast", porta::detail::clblast_provider)
