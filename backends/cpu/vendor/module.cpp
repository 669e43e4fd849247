// oneDNN's provider as a run-time module (-DPORTA_BACKEND_MODULES=ON), loaded by the cpu backend on
// the first impl=vendor use: the cpu backend runs on machines without oneDNN.
#include "backends/cpu/vendor/onednn.hpp"
#include "core/runtime/module_entry.hpp"

PORTA_VENDOR_MODULE("cpu-onednn", porta::detail::onednn_provider)
