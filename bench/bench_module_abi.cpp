// Compiled into each of porta-bench's modules: the string module_entry compares with porta-bench's.
#include "bench_module_abi.hpp"

extern "C" const char porta_bench_module_abi[] = PORTA_BENCH_MODULE_ABI;
