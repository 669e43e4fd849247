#include "backends/cpu/kernels/depthwise_plane.hpp"

#include "backends/cpu/kernels/micro_kernel.hpp"

namespace porta::detail {
namespace {

void generic_plane(const float* filter, std::int64_t taps_h, std::int64_t taps_w, const std::int64_t* row_shift,
                   const float* x, std::int64_t stride, std::int64_t dilation, float* y, std::int64_t count) {
  depthwise_plane_any(filter, taps_h, taps_w, row_shift, x, stride, dilation, y, count);
}

DepthwisePlaneFn choose() {
#if defined(__x86_64__)
  const std::string_view isa = gemm_micro_kernel().isa;
  if (isa == "avx512") return avx512_depthwise_plane();
  if (isa == "avx2") return avx2_depthwise_plane();
#endif
  return generic_plane;
}

}  // namespace

DepthwisePlaneFn depthwise_plane() {
  static const DepthwisePlaneFn chosen = choose();
  return chosen;
}

}  // namespace porta::detail
