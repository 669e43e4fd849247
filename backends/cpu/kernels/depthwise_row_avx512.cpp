#include "backends/cpu/kernels/depthwise_row.hpp"

namespace porta::detail {
namespace {

__attribute__((target("avx512f,fma"))) void row(const DepthwiseRow& a, float* y, std::int64_t q) {
  depthwise_row_body(a, y, q);
}

}  // namespace

DepthwiseRowFn avx512_depthwise_row() { return row; }

}  // namespace porta::detail
