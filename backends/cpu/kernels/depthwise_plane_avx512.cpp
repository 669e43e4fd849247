#include "backends/cpu/kernels/depthwise_plane.hpp"

namespace porta::detail {
namespace {

__attribute__((target("avx512f,fma"))) void plane(const float* filter, std::int64_t taps_h, std::int64_t taps_w,
                                         const std::int64_t* row_shift, const float* x, std::int64_t stride,
                                         std::int64_t dilation, float* y, std::int64_t count) {
  depthwise_plane_any(filter, taps_h, taps_w, row_shift, x, stride, dilation, y, count);
}

}  // namespace

DepthwisePlaneFn avx512_depthwise_plane() { return plane; }

}  // namespace porta::detail
