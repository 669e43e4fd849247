#include "backends/cpu/kernels/depthwise_plane.hpp"

namespace porta::detail {
namespace {

__attribute__((target("avx512f,fma"))) void plane(const float* filter, const std::int64_t* shift, std::int64_t taps,
                                         const float* x, std::int64_t stride, float* y, std::int64_t count) {
  depthwise_plane_any(filter, shift, taps, x, stride, y, count);
}

}  // namespace

DepthwisePlaneFn avx512_depthwise_plane() { return plane; }

}  // namespace porta::detail
