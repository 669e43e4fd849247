// depthwise_filter_gradient over odd sizes, size-1 dims, stride 2 (with input rows left over, so
// that the op finds more taps than the forward filter had), dilation, asymmetric padding, channel
// counts across the cpu kernel's blocks of 64 and vector tails, in both layouts.
#include <string>

#include "op_cases/case_graph.hpp"

namespace porta::cases::detail {
namespace {

struct GradientCase {
  std::string variant;
  Shape x;  // NCHW
  std::int64_t r, s;
  Conv2dParams p;
};

std::vector<GradientCase> gradient_cases() {
  return {
      {"k3_s1_p1", {2, 5, 9, 7}, 3, 3, {.pad = {1, 1, 1, 1}}},
      {"k3_s2_asym", {1, 3, 11, 10}, 3, 3, {.stride = {2, 2}, .pad = {1, 0, 0, 1}}},
      {"k3_s2_left_over", {1, 2, 6, 6}, 3, 3, {.stride = {2, 2}}},
      {"k3_d2", {2, 4, 10, 9}, 3, 3, {.pad = {2, 2, 2, 2}, .dilation = {2, 2}}},
      {"k5_s2_c70", {2, 70, 13, 12}, 5, 5, {.stride = {2, 2}, .pad = {2, 2, 2, 2}}},
      {"k1x3_h1", {3, 4, 1, 6}, 1, 3, {.stride = {1, 2}, .pad = {0, 1, 0, 1}}},
      {"k1_1x1", {1, 1, 1, 1}, 1, 1, {}},
      {"k3_c96_28", {4, 96, 28, 28}, 3, 3, {.pad = {1, 1, 1, 1}}},
  };
}

}  // namespace

void add_depthwise_gradient_cases(std::vector<OpCase>& list, DType t) {
  for (const Layout layout : {Layout::NCHW, Layout::NHWC})
    for (GradientCase gc : gradient_cases()) {
      gc.p.groups = gc.x[1];
      gc.p.layout = layout;
      const Conv2dParams& w = gc.p;
      const std::int64_t p = window_output_size(gc.x[2], gc.r, w.stride[0], w.pad[0], w.pad[2], w.dilation[0]);
      const std::int64_t q = window_output_size(gc.x[3], gc.s, w.stride[1], w.pad[1], w.pad[3], w.dilation[1]);
      const Shape x = stored(layout, gc.x), dy = stored(layout, {gc.x[0], gc.x[1], p, q});
      add_case(list, OpKind::DepthwiseFilterGradient, gc.variant + (layout == Layout::NHWC ? "_nhwc" : ""), t,
               [gc, x, dy](CaseGraph& c) { return c.g.depthwise_filter_gradient(c.input(x), c.input(dy), gc.p); });
    }
}

}  // namespace porta::cases::detail
