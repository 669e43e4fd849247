// Compiled into each of porta-bench's modules: the value module_entry compares with porta-bench's
// own before it takes the module's entry (bench_module.hpp).
extern "C" const char porta_bench_module_abi[] = PORTA_BENCH_MODULE_ABI;
