#pragma once
// What a GPU can do, derived from its architecture: host logic, tested on the CPU.
#include <string>
#include <string_view>

namespace porta::detail::gpu {

struct Capabilities {
  std::string arch;  // "sm_90", "gfx90a"
  bool fp16 = false;
  bool bf16 = false;
  bool matrix_units = false;  // tensor cores / MFMA / WMMA
  bool tf32 = false;
};

Capabilities nvidia_capabilities(int major, int minor);
// From hipDeviceProp_t::gcnArchName, e.g. "gfx90a:sramecc+:xnack-".
Capabilities amd_capabilities(std::string_view gcn_arch_name);

}  // namespace porta::detail::gpu
