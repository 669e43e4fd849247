#pragma once
// What a bench module and porta-bench must share to pass C++ objects across dlopen's boundary:
// porta's version, a hash of the interfaces that cross (cluster.hpp, onednn_backward.hpp) and the
// compiler. bench_module_abi.cpp puts it in each module; module_entry compares it.
#include "porta_bench_module_id.hpp"  // generated (cmake/PortaBuildId.cmake): PORTA_VERSION_TEXT, PORTA_CONTRACT_HASH

#define PORTA_BENCH_MODULE_ABI "porta-bench " PORTA_VERSION_TEXT "; interfaces " PORTA_CONTRACT_HASH "; " __VERSION__
