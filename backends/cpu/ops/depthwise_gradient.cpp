// depthwise_filter_gradient on the cpu. A task owns a block of 64 channels (NHWC, the vector
// kernel filter_gradient_row_body) or one channel (NCHW) and sums its taps over every image and
// row in one order, so the result does not depend on the threads.
#include <algorithm>
#include <variant>
#include <vector>

#include <tbb/parallel_for.h>

#include "backends/cpu/kernels/vector_kernels.hpp"
#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/ops/tensor_io.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

// The output columns [first[s], last[s]) whose tap s lands inside the input row.
void tap_columns(const ConvDims& d, const Conv2dParams& p, std::vector<std::int64_t>& first,
                 std::vector<std::int64_t>& last) {
  const std::int64_t stride = p.stride[1];
  for (std::int64_t s = 0; s < d.s; ++s) {
    const std::int64_t offset = s * p.dilation[1] - p.pad[1];  // input column of output column 0
    const std::int64_t begin = offset >= 0 ? 0 : ceil_div(-offset, stride);
    const std::int64_t end = d.w - 1 - offset < 0 ? 0 : (d.w - 1 - offset) / stride + 1;
    first[static_cast<std::size_t>(s)] = std::min(begin, d.q);
    last[static_cast<std::size_t>(s)] = std::clamp(end, first[static_cast<std::size_t>(s)], d.q);
  }
}

}  // namespace

void cpu_depthwise_filter_gradient(const HostOpArgs& args) {
  const auto& p = std::get<Conv2dParams>(args.node.params);
  const ConvDims d = depthwise_gradient_dims(args.inputs[0].shape(), args.inputs[1].shape(), p);
  const F32Input x(args.inputs[0]), dy(args.inputs[1]);
  const F32Output dw(args.output);
  const bool nhwc = p.layout == Layout::NHWC;
  const std::int64_t block = nhwc ? 64 : 1;
  std::vector<std::int64_t> first(static_cast<std::size_t>(d.s)), last(static_cast<std::size_t>(d.s));
  tap_columns(d, p, first, last);
  const FilterGradientRowFn run = vector_kernels().filter_gradient_row;
  const ActivationIndex x_at = d.x_index(), y_at = d.y_index();
  tbb::parallel_for(std::int64_t{0}, ceil_div(d.c, block), [&](std::int64_t b) {
    const std::int64_t c0 = b * block, width = std::min(block, d.c - c0);
    std::vector<float> acc(static_cast<std::size_t>(d.r * d.s * width), 0.0f);  // [R][S][width]
    for (std::int64_t n = 0; n < d.n; ++n)
      for (std::int64_t oh = 0; oh < d.p; ++oh)
        for (std::int64_t r = 0; r < d.r; ++r) {
          const std::int64_t h = oh * p.stride[0] + r * p.dilation[0] - p.pad[0];
          if (h < 0 || h >= d.h) continue;
          const FilterGradientRow row{.x_row = x.data() + x_at(n, c0, h, 0), .dy_row = dy.data() + y_at(n, c0, oh, 0),
                                      .ld = nhwc ? d.c : 1, .block = width, .taps = d.s, .first = first.data(),
                                      .last = last.data(), .stride = p.stride[1], .dilation = p.dilation[1],
                                      .pad_left = p.pad[1]};
          run(row, acc.data() + r * d.s * width);
        }
    for (std::int64_t c = 0; c < width; ++c)
      for (std::int64_t tap = 0; tap < d.r * d.s; ++tap)
        dw.data()[(c0 + c) * d.r * d.s + tap] = acc[static_cast<std::size_t>(tap * width + c)];
  });
  dw.commit(0, args.output.numel());
}

}  // namespace porta::detail
