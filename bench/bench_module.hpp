#pragma once
// porta-bench's own modules, lib/porta/libporta-bench-<name>.so: the code that calls a vendor
// library (MPI: bench/mpi/, oneDNN: bench/onednn/), built apart and loaded at run time, so that
// porta-bench needs no vendor library and starts where one is absent.
#include <string>

namespace porta::bench {

enum class ModuleSymbols { Local, Global };  // dlopen's RTLD_LOCAL, RTLD_GLOBAL

// The function `entry` of module `name` ("mpi": libporta-bench-mpi.so), from the first file that
// exists of: $PORTA_BENCH_<NAME>_MODULE alone, where set; lib/porta beside the build tree's bench/;
// <libdir>/porta beside an installed bin/. The module stays loaded. Throws Error Unsupported with
// the loader's words, the files looked for where none exists, or the two builds where the module's
// porta_bench_module_abi (bench_module_abi.hpp: version, interfaces, compiler) is not porta-bench's.
void* module_entry(const std::string& name, const char* entry, ModuleSymbols symbols);

}  // namespace porta::bench
