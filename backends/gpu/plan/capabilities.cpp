#include "backends/gpu/plan/capabilities.hpp"

#include <string>

namespace porta::detail::gpu {

Capabilities nvidia_capabilities(int major, int minor) {
  Capabilities c;
  c.arch = "sm_" + std::to_string(major * 10 + minor);
  const int version = major * 10 + minor;
  c.fp16 = version >= 53;
  c.bf16 = version >= 80;
  c.matrix_units = version >= 70;
  c.tf32 = version >= 80;
  return c;
}

Capabilities amd_capabilities(std::string_view gcn_arch_name) {
  Capabilities c;
  c.arch = std::string(gcn_arch_name.substr(0, gcn_arch_name.find(':')));
  const std::string_view arch = c.arch;
  const bool cdna = arch == "gfx908" || arch == "gfx90a" || arch.starts_with("gfx94") || arch.starts_with("gfx95");
  const bool rdna3_or_later = arch.starts_with("gfx11") || arch.starts_with("gfx12");
  c.fp16 = true;  // every arch HIP supports (Vega and later) has packed f16 arithmetic
  c.bf16 = arch == "gfx90a" || arch.starts_with("gfx94") || arch.starts_with("gfx95") || rdna3_or_later;
  c.matrix_units = cdna || rdna3_or_later;  // MFMA on CDNA, WMMA on RDNA 3
  c.tf32 = arch.starts_with("gfx94");       // xf32 on MI300 only
  return c;
}

bool native_tf32(const Capabilities& caps) { return caps.tf32 && caps.arch.starts_with("sm_"); }

}  // namespace porta::detail::gpu
