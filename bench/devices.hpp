#pragma once
// What this build can run on: `porta-bench devices` and the op x device matrix of `porta-bench support`.
#include <cstdio>

namespace porta::bench {

// Every device of every compiled-in backend, and why a backend has none.
void print_devices(std::FILE* out);

// For each op, a representative f32 case from the shared registry asked of each device
// (Device::unsupported_reason): "yes" or "no: why". Markdown is what docs/ops.md is made from.
void print_support_matrix(std::FILE* out, bool markdown);

}  // namespace porta::bench
