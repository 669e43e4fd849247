#include "backends/cpu/kernels/depthwise_row.hpp"

namespace porta::detail {
namespace {

__attribute__((target("avx2,fma"))) void row(const DepthwiseRow& a, float* y, std::int64_t q) {
  depthwise_row_body(a, y, q);
}

}  // namespace

DepthwiseRowFn avx2_depthwise_row() { return row; }

}  // namespace porta::detail
