// The backward ops and the fused loss: elementwise activation gradients in f32 chunks, max pooling's
// gradient a channel plane (NCHW) or an image's block of channels (NHWC) per task (its windows
// scatter only into their own channels), softmax cross-entropy a row per task.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <variant>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/ops/tensor_io.hpp"
#include "core/runtime/op_math.hpp"
#include "porta/error.hpp"

namespace porta::detail {

namespace {

// With the activation's kind a constant and its parameters in locals that no store can alias, the
// formula's switch folds away and the loop vectorises, its tests as selects: the switch and the
// branches per element, mispredicted on real data, took 46 ms for relu6's gradient over
// 8x112x112x96 on one Zen 4 core.
template <int kind>
void activation_backward_of(const HostOpArgs& args, const ActivationGradient& gradient) {
  const HostTensor &x = args.inputs[0], &dy = args.inputs[1], &dx = args.output;
  parallel_chunks(dx.numel(), chunk_elements, [&](std::int64_t begin, std::int64_t count) {
    ActivationGradient f = gradient;
    f.kind = kind;
    ChunkBuffer x_buffer, dy_buffer, dx_buffer;
    const float* xv = read_f32(x, begin, count, x_buffer.data());
    const float* dyv = read_f32(dy, begin, count, dy_buffer.data());
    float* dxv = write_f32(dx, begin, dx_buffer.data());
    for (std::int64_t i = 0; i < count; ++i) dxv[i] = dyv[i] * activation_derivative(f, xv[i]);
    store_f32(dx, begin, count, dxv);
  });
}

}  // namespace

void cpu_activation_backward(const HostOpArgs& args) {
  const ActivationGradient f = activation_gradient(std::get<ActivationBackwardParams>(args.node.params));
  switch (f.kind) {
    case GRAD_RELU: return activation_backward_of<GRAD_RELU>(args, f);
    case GRAD_CLIP: return activation_backward_of<GRAD_CLIP>(args, f);
    case GRAD_HARD_SIGMOID: return activation_backward_of<GRAD_HARD_SIGMOID>(args, f);
    case GRAD_HARD_SWISH: return activation_backward_of<GRAD_HARD_SWISH>(args, f);
    case GRAD_GELU: return activation_backward_of<GRAD_GELU>(args, f);
    default: throw Error(ErrorCode::Internal, "activation_backward: an activation the builder does not admit");
  }
}

// One NCHW channel plane of max pooling's gradient. An output row at a time, each filter tap over
// the run of output columns whose input column is inside the image: every column keeps the first
// maximum in window order (window_argmax's choice, NaN included) with no per-tap bounds test, then
// adds its dy there.
void max_pool_plane_backward(const Pool2dParams& p, const PoolDims& d, const float* x, const float* dy, float* dx,
                             std::vector<float>& best, std::vector<std::int64_t>& at) {
  std::fill_n(dx, d.h * d.w, 0.0f);
  const std::int64_t sh = p.stride[0], sw = p.stride[1], dh = p.dilation[0], dw = p.dilation[1];
  for (std::int64_t oh = 0; oh < d.p; ++oh) {
    std::fill(at.begin(), at.end(), -1);
    for (std::int64_t r = 0; r < p.kernel[0]; ++r) {
      const std::int64_t h = oh * sh - p.pad[0] + r * dh;
      if (h < 0 || h >= d.h) continue;
      for (std::int64_t s = 0; s < p.kernel[1]; ++s) {
        const std::int64_t offset = s * dw - p.pad[1];  // input column of output column ow: ow * sw + offset
        const std::int64_t first = offset >= 0 ? 0 : ceil_div(-offset, sw);
        const std::int64_t last = std::min(d.q, d.w - offset <= 0 ? 0 : ceil_div(d.w - offset, sw));
        const float* row = x + h * d.w;
        for (std::int64_t ow = first; ow < last; ++ow) {
          const std::int64_t w = ow * sw + offset;
          const float v = row[w];
          const auto o = static_cast<std::size_t>(ow);
          // Selects, not a branch: on real data which tap wins is unpredictable.
          const bool take = (at[o] < 0) | (v > best[o]);
          best[o] = take ? v : best[o];
          at[o] = take ? h * d.w + w : at[o];
        }
      }
    }
    for (std::int64_t ow = 0; ow < d.q; ++ow)
      if (const std::int64_t i = at[static_cast<std::size_t>(ow)]; i >= 0) dx[i] += dy[oh * d.q + ow];
  }
}

// NHWC: one image's block of up to `max_block` channels, whose values lie side by side at every
// pixel. Each output pixel walks its taps in window order, comparing the whole block at a time with
// the plane version's selects per channel, then adds dy where each channel's first maximum is.
constexpr std::int64_t max_block = 64;

void max_pool_block_backward(const Pool2dParams& p, const PoolDims& d, std::int64_t width, const float* x,
                             const float* dy, float* dx) {
  for (std::int64_t i = 0; i < d.h * d.w; ++i) std::fill_n(dx + i * d.c, width, 0.0f);
  std::array<float, max_block> best{};
  std::array<std::int64_t, max_block> at{};
  for (std::int64_t oh = 0; oh < d.p; ++oh)
    for (std::int64_t ow = 0; ow < d.q; ++ow) {
      at.fill(-1);
      for (std::int64_t r = 0; r < p.kernel[0]; ++r) {
        const std::int64_t h = oh * p.stride[0] - p.pad[0] + r * p.dilation[0];
        if (h < 0 || h >= d.h) continue;
        for (std::int64_t s = 0; s < p.kernel[1]; ++s) {
          const std::int64_t w = ow * p.stride[1] - p.pad[1] + s * p.dilation[1];
          if (w < 0 || w >= d.w) continue;
          const float* v = x + (h * d.w + w) * d.c;
          for (std::int64_t c = 0; c < width; ++c) {
            const bool take = (at[c] < 0) | (v[c] > best[c]);
            best[c] = take ? v[c] : best[c];
            at[c] = take ? h * d.w + w : at[c];
          }
        }
      }
      const float* g = dy + (oh * d.q + ow) * d.c;
      for (std::int64_t c = 0; c < width; ++c)
        if (at[c] >= 0) dx[at[c] * d.c + c] += g[c];
    }
}

void cpu_max_pool2d_backward(const HostOpArgs& args) {
  const auto& p = std::get<Pool2dParams>(args.node.params);
  const PoolDims d = pool_dims(args.inputs[0].shape(), p);
  const F32Input x(args.inputs[0]), dy(args.inputs[1]);
  const F32Output dx(args.output);
  if (d.layout == Layout::NHWC) {
    const std::int64_t blocks = ceil_div(d.c, max_block);
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, d.n * blocks), [&](const auto& range) {
      for (std::int64_t task = range.begin(); task != range.end(); ++task) {
        const std::int64_t n = task / blocks, c0 = task % blocks * max_block;
        const std::int64_t x0 = n * d.h * d.w * d.c + c0, y0 = n * d.p * d.q * d.c + c0;
        max_pool_block_backward(p, d, std::min(max_block, d.c - c0), x.data() + x0, dy.data() + y0, dx.data() + x0);
      }
    });
  } else {
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, d.n * d.c), [&](const auto& range) {
      std::vector<float> best(static_cast<std::size_t>(d.q));
      std::vector<std::int64_t> at(static_cast<std::size_t>(d.q));
      for (std::int64_t plane = range.begin(); plane != range.end(); ++plane)
        max_pool_plane_backward(p, d, x.data() + plane * d.h * d.w, dy.data() + plane * d.p * d.q,
                                dx.data() + plane * d.h * d.w, best, at);
    });
  }
  dx.commit(0, args.output.numel());
}

// Float labels: the sum over the row's labels, in double; i64/i32 class labels: the one class's term,
// logsumexp(z) - z[label] in f32.
void cpu_softmax_cross_entropy(const HostOpArgs& args) {
  const HostTensor& labels = args.inputs[1];
  const bool indices = !is_float(labels.dtype());
  const F32Input z(args.inputs[0]);
  const std::optional<F32Input> l = indices ? std::nullopt : std::optional<F32Input>(std::in_place, labels);
  const std::int64_t classes = args.inputs[0].shape().back(), rows = args.inputs[0].numel() / classes;
  const F32Output loss(args.output);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows), [&](const auto& range) {
    for (std::int64_t r = range.begin(); r != range.end(); ++r) {
      const float* zr = z.data() + r * classes;
      const auto logit = [&](std::int64_t c) { return zr[c]; };
      if (indices) {
        const std::int64_t label = load_as_i64(labels.data, static_cast<std::size_t>(r), labels.dtype());
        loss.data()[r] = cross_entropy_index_row<float>(classes, logit, label_coordinate(label, classes, args.node));
      } else {
        const float* lr = l->data() + r * classes;
        loss.data()[r] =
            static_cast<float>(cross_entropy_row<double>(classes, logit, [&](std::int64_t c) { return lr[c]; }));
      }
    }
  });
  loss.commit(0, rows);
}

// dy (softmax(z) - one_hot(label)) a row per task, in f32: each exp is taken once, kept in the row's
// output and scaled there.
void cpu_softmax_cross_entropy_backward(const HostOpArgs& args) {
  const HostTensor& labels = args.inputs[1];
  const F32Input z(args.inputs[0]), dy(args.inputs[2]);
  const std::int64_t classes = args.inputs[0].shape().back(), rows = args.inputs[0].numel() / classes;
  const F32Output dz(args.output);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows), [&](const auto& range) {
    for (std::int64_t r = range.begin(); r != range.end(); ++r) {
      const float* zr = z.data() + r * classes;
      float* dr = dz.data() + r * classes;
      const std::int64_t label = load_as_i64(labels.data, static_cast<std::size_t>(r), labels.dtype());
      const std::int64_t hot = label_coordinate(label, classes, args.node);
      float top = zr[0];
      for (std::int64_t c = 1; c < classes; ++c) top = std::max(top, zr[c]);
      float sum = 0.0f;
      for (std::int64_t c = 0; c < classes; ++c) sum += dr[c] = std::exp(zr[c] - top);
      const float d = dy.data()[r], scale = d / sum;
      for (std::int64_t c = 0; c < classes; ++c) dr[c] *= scale;
      dr[hot] -= d;
    }
  });
  dz.commit(0, args.output.numel());
}

}  // namespace porta::detail
