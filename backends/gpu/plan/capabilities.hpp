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
  bool tf32 = false;  // the hardware has tf32 (NVIDIA) or xf32 (AMD) matrix instructions
};

Capabilities nvidia_capabilities(int major, int minor);
// From hipDeviceProp_t::gcnArchName, e.g. "gfx90a:sramecc+:xnack-".
Capabilities amd_capabilities(std::string_view gcn_arch_name);

// Whether porta's kernels run f32 as tf32 there, when the caller allows tf32: on NVIDIA's tf32
// tensor cores (wmma). porta has no kernel for AMD's xf32 (MI300 only), so AMD devices run f32 on
// the SIMT path and report no tf32.
bool native_tf32(const Capabilities& caps);

}  // namespace porta::detail::gpu
