#include "backends/cpu/kernels/depthwise_row.hpp"

#include "backends/cpu/kernels/micro_kernel.hpp"

namespace porta::detail {
namespace {

void generic_row(const DepthwiseRow& row, float* y, std::int64_t q) { depthwise_row_body(row, y, q); }

DepthwiseRowFn choose() {
#if defined(__x86_64__)
  const std::string_view isa = gemm_micro_kernel().isa;
  if (isa == "avx512") return avx512_depthwise_row();
  if (isa == "avx2") return avx2_depthwise_row();
#endif
  return generic_row;
}

}  // namespace

DepthwiseRowFn depthwise_row() {
  static const DepthwiseRowFn chosen = choose();
  return chosen;
}

}  // namespace porta::detail
