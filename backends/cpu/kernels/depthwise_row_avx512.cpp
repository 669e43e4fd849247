#include "backends/cpu/kernels/depthwise_row.hpp"

namespace porta::detail {
namespace {

__attribute__((target("avx512f,fma"))) void row(const float* filter, std::int64_t taps, const float* x,
                                       std::int64_t stride, std::int64_t dilation, std::int64_t offset,
                                       std::int64_t width, float* y, std::int64_t columns) {
  depthwise_row_any(filter, taps, x, stride, dilation, offset, width, y, columns);
}

}  // namespace

DepthwiseRowFn avx512_depthwise_row() { return row; }

}  // namespace porta::detail
