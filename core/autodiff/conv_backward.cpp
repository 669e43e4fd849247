// Conv2d's data and filter gradients as forward convolutions (docs/training.md), so that every
// backend runs them with its own convolution kernels:
// - the data gradient is a transposed convolution: dy convolved at stride 1 with the filters flipped
//   in space and with their in and out channels swapped within each group. Strided, it splits into
//   s_h x s_w phases (sub-pixel form): the dx pixels (a + s_h i, b + s_w j) read only the taps whose
//   offsets the stride divides, so each phase is a stride-1 convolution of dy with those taps, and
//   the phases interleave into dx; no multiplication meets the zeros that spreading dy by the stride
//   would insert (a 1x1 filter convolves dy first and spreads the result);
// - the filter gradient correlates x with dy over N, P and Q. Ungrouped, it is one GEMM,
//   dyᵀ [K, N P Q] times im2col(x) [N P Q, R S C], which every backend's GEMM runs at full speed;
//   depthwise (one filter per channel), the depthwise_filter_gradient op; otherwise grouped, a
//   convolution whose batch is the channels of a group, whose input channels are the images, whose
//   filters are dy's channels, with stride and dilation trading places (the forward kernels tile
//   that tiny-output, huge-filter shape poorly: depthwise, 14.2 s of a 28 s EfficientNet-B0 step).
#include <algorithm>
#include <numeric>
#include <string>

#include "core/autodiff/graph_math.hpp"
#include "core/autodiff/rules.hpp"
#include "core/runtime/op_math.hpp"
#include "porta/autodiff.hpp"
#include "porta/error.hpp"

namespace porta::autodiff {
namespace {

// NHWC tensors go through the NCHW formulation of the grouped filter gradient (and back); NCHW ones
// pass straight through.
Tensor to_nchw(Graph& g, Tensor t, Layout layout) { return layout == Layout::NHWC ? g.transpose(t, {0, 3, 1, 2}) : t; }

std::int64_t h_axis_of(Layout layout) { return layout == Layout::NHWC ? 1 : 2; }

// dy [N, K, P, Q] (NHWC: [N, P, Q, K]) with stride - 1 zeros after each pixel along H and W.
Tensor spread(Graph& g, Tensor dy, const std::array<std::int64_t, 2>& stride, Layout layout) {
  if (stride[0] == 1 && stride[1] == 1) return dy;
  const Shape s = g.shape(dy);
  const std::int64_t h = h_axis_of(layout);
  // Each of H and W followed by a unit axis that the pad grows to the stride.
  Shape six;
  std::vector<std::int64_t> after;
  for (std::int64_t axis = 0; axis < 4; ++axis) {
    six.push_back(s[static_cast<std::size_t>(axis)]);
    after.push_back(0);
    if (axis == h || axis == h + 1) {
      six.push_back(1);
      after.push_back(stride[static_cast<std::size_t>(axis - h)] - 1);
    }
  }
  std::vector<std::int64_t> pads(6, 0);
  pads.insert(pads.end(), after.begin(), after.end());
  Shape out = s;
  out[static_cast<std::size_t>(h)] *= stride[0];
  out[static_cast<std::size_t>(h + 1)] *= stride[1];
  return g.reshape(g.pad(g.reshape(dy, six), {.pads = pads}), out);
}

// t padded (or, where negative, cropped) along H and W by pad {top, left, bottom, right}.
Tensor pad_hw(Graph& g, Tensor t, const std::array<std::int64_t, 4>& pad, Layout layout) {
  if (std::all_of(pad.begin(), pad.end(), [](std::int64_t v) { return v == 0; })) return t;
  std::vector<std::int64_t> pads(8, 0);
  const auto h = static_cast<std::size_t>(h_axis_of(layout));
  pads[h] = pad[0], pads[h + 1] = pad[1], pads[h + 4] = pad[2], pads[h + 5] = pad[3];
  return g.pad(t, {.pads = pads});
}

// [K, C/G, R, S] filters as a transposed convolution reads them: flipped in R and S, [C, K/G, R, S].
Tensor transposed_filters(Graph& g, Tensor w, std::int64_t groups) {
  const Shape s = g.shape(w);
  const SliceParams flip{.starts = {s[2] - 1, s[3] - 1}, .ends = {-s[2] - 1, -s[3] - 1}, .axes = {2, 3},
                         .steps = {-1, -1}};
  const Tensor flipped = s[2] == 1 && s[3] == 1 ? w : g.slice(w, flip);  // a 1x1 filter has nothing to flip
  const Tensor grouped = g.reshape(flipped, {groups, s[0] / groups, s[1], s[2], s[3]});
  return g.reshape(g.transpose(grouped, {0, 2, 1, 3, 4}), {s[1] * groups, s[0] / groups, s[2], s[3]});
}

void check_conv(const Graph& g, const Conv2dParams& p, const Shape& x, const Shape& w, Tensor dy, const char* what) {
  const std::int64_t channels = x.size() == 4 ? x[p.layout == Layout::NHWC ? 3 : 1] : 0;
  const bool fits = x.size() == 4 && w.size() == 4 && p.groups >= 1 && channels % p.groups == 0 &&
                    w[0] % p.groups == 0 && w[1] * p.groups == channels;
  if (!fits)
    throw Error(ErrorCode::ShapeMismatch, std::string(what) + ": input " + to_string(x) + " and filters " +
                                              to_string(w) + " do not make a conv2d with groups " +
                                              std::to_string(p.groups));
  const porta::detail::ConvDims d = porta::detail::conv_dims(x, w, p);
  const Shape want = p.layout == Layout::NHWC ? Shape{x[0], d.p, d.q, w[0]} : Shape{x[0], w[0], d.p, d.q};
  if (g.shape(dy) != want)
    throw Error(ErrorCode::ShapeMismatch, std::string(what) + ": dy " + to_string(g.shape(dy)) +
                                              " must be the conv2d's output shape " + to_string(want));
}

// x as the convolution's patches, R S C values per output pixel: one strided slice of the padded x
// per filter tap, concatenated along the channels. NHWC gives [N P Q, R S C], NCHW [N, R S C, P Q].
Tensor im2col(Graph& g, Tensor x, const Conv2dParams& p, const Shape& w_shape, std::int64_t out_h,
              std::int64_t out_w) {
  const bool nhwc = p.layout == Layout::NHWC;
  const std::int64_t h_axis = nhwc ? 1 : 2, c_axis = nhwc ? 3 : 1;
  const bool padded = std::any_of(p.pad.begin(), p.pad.end(), [](std::int64_t v) { return v != 0; });
  std::vector<std::int64_t> pads(8, 0);
  pads[h_axis] = p.pad[0], pads[h_axis + 1] = p.pad[1], pads[h_axis + 4] = p.pad[2], pads[h_axis + 5] = p.pad[3];
  const Tensor xp = padded ? g.pad(x, {.pads = pads}) : x;
  const Shape s = g.shape(xp);
  const bool unit_stride = p.stride[0] == 1 && p.stride[1] == 1;
  std::vector<Tensor> taps;
  for (std::int64_t r = 0; r < w_shape[2]; ++r)
    for (std::int64_t c = 0; c < w_shape[3]; ++c) {
      const std::int64_t top = r * p.dilation[0], left = c * p.dilation[1];
      const std::int64_t bottom = top + (out_h - 1) * p.stride[0] + 1, right = left + (out_w - 1) * p.stride[1] + 1;
      const bool whole = unit_stride && top == 0 && left == 0 && bottom == s[h_axis] && right == s[h_axis + 1];
      taps.push_back(whole ? xp : g.slice(xp, {.starts = {top, left}, .ends = {bottom, right},
                                               .axes = {h_axis, h_axis + 1}, .steps = {p.stride[0], p.stride[1]}}));
    }
  const Tensor cols = taps.size() == 1 ? taps[0] : g.concat(taps, c_axis);
  const std::int64_t patch = static_cast<std::int64_t>(taps.size()) * s[c_axis];
  return nhwc ? g.reshape(cols, {s[0] * out_h * out_w, patch}) : g.reshape(cols, {s[0], patch, out_h * out_w});
}

// The ungrouped filter gradient as GEMMs: dyᵀ im2col(x) is [K, R S C], reordered to [K, C, R, S].
// NHWC makes it one GEMM over N P Q; NCHW one per image (over P Q), summed, so that neither x nor
// dy is transposed.
Tensor filter_gradient_gemm(Graph& g, Tensor x, Tensor dy, const Conv2dParams& p, const Shape& w_shape) {
  const Shape sd = g.shape(dy);
  const bool nhwc = p.layout == Layout::NHWC;
  const std::int64_t k = sd[nhwc ? 3 : 1], out_h = sd[nhwc ? 1 : 2], out_w = sd[nhwc ? 2 : 3];
  const Tensor cols = im2col(g, x, p, w_shape, out_h, out_w);
  const Tensor dw = nhwc ? g.gemm(g.reshape(dy, {sd[0] * out_h * out_w, k}), cols, {.trans_a = true})
                         : g.reduce(g.matmul(g.reshape(dy, {sd[0], k, out_h * out_w}), cols, {.trans_b = true}),
                                    {.axes = {0}, .keepdims = false});
  return g.transpose(g.reshape(dw, {w_shape[0], w_shape[2], w_shape[3], w_shape[1]}), {0, 3, 1, 2});
}

// The taps the op finds beyond R x S, where the stride left rows or columns of x over, are sliced off.
Tensor depthwise_filter_gradient(Graph& g, Tensor x, Tensor dy, const Conv2dParams& p, const Shape& w_shape) {
  const Conv2dParams plain{.stride = p.stride, .pad = p.pad, .dilation = p.dilation, .groups = p.groups,
                           .layout = p.layout};
  const Tensor full = g.depthwise_filter_gradient(x, dy, plain);
  const Shape s = g.shape(full);
  if (s[2] == w_shape[2] && s[3] == w_shape[3]) return full;
  return g.slice(full, {.starts = {0, 0}, .ends = {w_shape[2], w_shape[3]}, .axes = {2, 3}, .steps = {}});
}

// Along one axis, the taps of the flipped filter that a phase a of the data gradient reads, and the
// stride-1 convolution over dy that applies them: dx row a + s i reads tap r from dy row
// (a + pad - r d) / s + i wherever s divides a + pad - r d, so the taps lie s / gcd(s, d) apart and
// read dy rows d / gcd(s, d) apart. `in` is dy's extent, `out` the phase's.
struct PhaseAxis {
  std::int64_t first = 0, taps = 0, step = 1;  // flipped-filter taps first, first + step, ...; none: zeros
  std::int64_t dilation = 1, pad_before = 0, pad_after = 0;
  std::int64_t end() const { return first + (taps - 1) * step + 1; }
};

PhaseAxis phase_axis(std::int64_t a, std::int64_t s, std::int64_t d, std::int64_t pad, std::int64_t extent,
                     std::int64_t in, std::int64_t out) {
  PhaseAxis ax{.step = s / std::gcd(s, d), .dilation = d / std::gcd(s, d)};
  std::int64_t r0 = 0;  // the first tap of the phase, in the unflipped filter
  while (r0 < extent && (a + pad - r0 * d) % s != 0) ++r0;
  if (r0 == extent) return ax;
  ax.taps = (extent - 1 - r0) / ax.step + 1;
  ax.first = extent - 1 - (r0 + (ax.taps - 1) * ax.step);
  const std::int64_t offset = (a + pad - r0 * d) / s;  // the dy row that dx row a reads with tap r0
  ax.pad_before = (ax.taps - 1) * ax.dilation - offset;
  ax.pad_after = out - in + offset;
  if (in + std::min<std::int64_t>(ax.pad_before, 0) + std::min<std::int64_t>(ax.pad_after, 0) <= 0)
    ax.taps = 0;  // every dy row this phase could read is cropped away
  return ax;
}

// One phase as a stride-1 convolution of dy with its taps of wt: [N, C, out_h, out_w], or NHWC.
Tensor phase_conv(Graph& g, Tensor dy, Tensor wt, const PhaseAxis& h, const PhaseAxis& w, std::int64_t groups,
                  Layout layout, const Shape& out) {
  if (h.taps == 0 || w.taps == 0) return detail::filled(g, out, 0.0f, g.dtype(dy));
  const Shape sw = g.shape(wt);
  const Tensor taps = h.taps == sw[2] && w.taps == sw[3]
                          ? wt
                          : g.slice(wt, {.starts = {h.first, w.first}, .ends = {h.end(), w.end()}, .axes = {2, 3},
                                         .steps = {h.step, w.step}});
  // Negative pads crop, which the convolution cannot: a pad node does it first.
  const std::array<std::int64_t, 4> pad{h.pad_before, w.pad_before, h.pad_after, w.pad_after};
  std::array<std::int64_t, 4> crop{}, grow{};
  for (std::size_t i = 0; i < 4; ++i) {
    crop[i] = std::min<std::int64_t>(pad[i], 0);
    grow[i] = std::max<std::int64_t>(pad[i], 0);
  }
  return g.conv2d(pad_hw(g, dy, crop, layout), taps,
                  {.pad = grow, .dilation = {h.dilation, w.dilation}, .groups = groups, .layout = layout});
}

}  // namespace

namespace detail {

// In dy's own layout throughout: porta's NHWC convolutions are its fast ones, and a transpose of dy
// and of dx on the way cost as much as a 1x1 layer's convolution.
Tensor transposed_conv(Graph& g, Tensor dy, Tensor w, const Conv2dParams& p, std::int64_t h, std::int64_t wd) {
  const Shape sw = g.shape(w);
  const Tensor wt = transposed_filters(g, w, p.groups);
  const bool nhwc = p.layout == Layout::NHWC;
  const Shape s = g.shape(dy);
  const Shape sd{s[0], s[nhwc ? 3 : 1], s[nhwc ? 1 : 2], s[nhwc ? 2 : 3]};  // N, K, P, Q
  // A 1x1 filter commutes with the spreading: convolve the P x Q pixels, then spread them.
  if (sw[2] == 1 && sw[3] == 1) {
    const std::array<std::int64_t, 4> pad{-p.pad[0], -p.pad[1], h + p.pad[0] - sd[2] * p.stride[0],
                                          wd + p.pad[1] - sd[3] * p.stride[1]};
    const Tensor dx = g.conv2d(dy, wt, {.groups = p.groups, .layout = p.layout});
    return pad_hw(g, spread(g, dx, p.stride, p.layout), pad, p.layout);
  }
  // Phase (a, b) makes dx rows a + s_h i and columns b + s_w j, for i < ceil(H / s_h), j < ceil(W / s_w).
  const std::int64_t sh = p.stride[0], sv = p.stride[1], ph = (h + sh - 1) / sh, pw = (wd + sv - 1) / sv;
  const std::int64_t n = sd[0], c = sw[1] * p.groups;
  const Shape phase_shape = nhwc ? Shape{n, ph, pw, c} : Shape{n, c, ph, pw};
  std::vector<Tensor> phases;
  for (std::int64_t a = 0; a < sh; ++a)
    for (std::int64_t b = 0; b < sv; ++b)
      phases.push_back(phase_conv(g, dy, wt, phase_axis(a, sh, p.dilation[0], p.pad[0], sw[2], sd[2], ph),
                                  phase_axis(b, sv, p.dilation[1], p.pad[1], sw[3], sd[3], pw), p.groups, p.layout,
                                  phase_shape));
  if (phases.size() == 1) return phases[0];
  // The phases interleaved, then cut to H x W: NCHW [N, C, s_h, s_w, ceil(H / s_h), ceil(W / s_w)],
  // NHWC [N, ceil(H / s_h), ceil(W / s_w), s_h, s_w, C] (stacked along C).
  const Tensor stacked = nhwc ? g.reshape(g.concat(phases, 3), {n, ph, pw, sh, sv, c})
                              : g.reshape(g.concat(phases, 2), {n, c, sh, sv, ph, pw});
  const Tensor woven = g.transpose(stacked, nhwc ? std::vector<std::int64_t>{0, 1, 3, 2, 4, 5}
                                                 : std::vector<std::int64_t>{0, 1, 4, 2, 5, 3});
  const Tensor dx = g.reshape(woven, nhwc ? Shape{n, ph * sh, pw * sv, c} : Shape{n, c, ph * sh, pw * sv});
  if (ph * sh == h && pw * sv == wd) return dx;
  const std::int64_t h_axis = nhwc ? 1 : 2;
  return g.slice(dx, {.starts = {0, 0}, .ends = {h, wd}, .axes = {h_axis, h_axis + 1}, .steps = {}});
}

}  // namespace detail

Tensor conv2d_backward_data(Graph& g, Tensor dy, Tensor w, const Conv2dParams& p, const Shape& x_shape) {
  check_conv(g, p, x_shape, g.shape(w), dy, "conv2d_backward_data");
  const bool nhwc = p.layout == Layout::NHWC;
  return detail::transposed_conv(g, dy, w, p, x_shape[nhwc ? 1 : 2], x_shape[nhwc ? 2 : 3]);
}

Tensor conv2d_backward_filter(Graph& g, Tensor x, Tensor dy, const Conv2dParams& p, const Shape& w_shape) {
  check_conv(g, p, g.shape(x), w_shape, dy, "conv2d_backward_filter");
  if (p.groups == 1) return filter_gradient_gemm(g, x, dy, p, w_shape);
  if (w_shape[0] == p.groups && w_shape[1] == 1) return depthwise_filter_gradient(g, x, dy, p, w_shape);
  const Tensor xn = to_nchw(g, x, p.layout), dn = to_nchw(g, dy, p.layout);
  const Shape sx = g.shape(xn), sd = g.shape(dn);
  const std::int64_t groups = p.groups, cg = sx[1] / groups, kg = sd[1] / groups;
  // x as [C/G, G N, H, W]: a batch of C/G, G groups of N channels.
  const Tensor xs = g.reshape(g.transpose(g.reshape(xn, {sx[0], groups, cg, sx[2], sx[3]}), {2, 1, 0, 3, 4}),
                              {cg, groups * sx[0], sx[2], sx[3]});
  // dy as [K, N, P, Q] filters.
  const Tensor ds = g.reshape(g.transpose(g.reshape(dn, {sd[0], groups, kg, sd[2], sd[3]}), {1, 2, 0, 3, 4}),
                              {sd[1], sd[0], sd[2], sd[3]});
  const Conv2dParams t{.stride = p.dilation, .pad = p.pad, .dilation = p.stride, .groups = groups};
  const Tensor full = g.conv2d(xs, ds, t);  // [C/G, K, R', S'], R' >= R where the stride left rows over
  const bool exact = g.shape(full)[2] == w_shape[2] && g.shape(full)[3] == w_shape[3];
  const Tensor cut =
      exact ? full : g.slice(full, {.starts = {0, 0}, .ends = {w_shape[2], w_shape[3]}, .axes = {2, 3}, .steps = {}});
  return g.transpose(cut, {1, 0, 2, 3});
}

}  // namespace porta::autodiff
