// Pooling in either layout. NCHW computes one output element at a time along a row of one channel;
// NHWC computes every channel of one output pixel together, each tap a contiguous channel vector.
#include <algorithm>
#include <limits>
#include <variant>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/ops/tensor_io.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

// Calls visit(h, w) for each position of the window of output (oh, ow) that lies inside the input,
// and returns how many of its positions lie inside the padded input (ceil_mode can overhang it).
template <class Visit>
std::int64_t for_window(const Pool2dParams& p, const PoolDims& d, std::int64_t oh, std::int64_t ow, Visit visit) {
  const std::int64_t h0 = oh * p.stride[0] - p.pad[0], w0 = ow * p.stride[1] - p.pad[1];
  std::int64_t padded = 0;
  for (std::int64_t i = 0; i < p.kernel[0]; ++i) {
    const std::int64_t h = h0 + i * p.dilation[0];
    const bool h_padded = h >= -p.pad[0] && h < d.h + p.pad[2];
    const bool h_inside = h >= 0 && h < d.h;
    for (std::int64_t j = 0; j < p.kernel[1]; ++j) {
      const std::int64_t w = w0 + j * p.dilation[1];
      if (h_padded && w >= -p.pad[1] && w < d.w + p.pad[3]) ++padded;
      if (h_inside && w >= 0 && w < d.w) visit(h, w);
    }
  }
  return padded;
}

// Max or average of each window. A window that covers no input element (odd ceil_mode cases)
// yields -inf for max, as in PyTorch, and 0 for the average.
template <bool is_max> void pool(const HostOpArgs& args) {
  const auto& p = std::get<Pool2dParams>(args.node.params);
  const PoolDims d = pool_dims(args.inputs[0].shape(), p);
  const F32Input x(args.inputs[0]);
  const HostTensor& y = args.output;
  const float start = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
  const auto combine = [](float& acc, float v) { acc = is_max ? std::max(acc, v) : acc + v; };
  const auto average_scale = [&](std::int64_t inside, std::int64_t padded) {
    const std::int64_t count = p.count_include_pad ? padded : inside;
    return count == 0 ? 0.0f : 1.0f / static_cast<float>(count);
  };
  // NCHW: a task per output row of one channel. NHWC: a task per output row of every channel.
  const bool nhwc = d.layout == Layout::NHWC;
  const std::int64_t row_length = d.q * (nhwc ? d.c : 1);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, y.numel() / row_length), [&](const auto& range) {
    std::vector<float> buffer(static_cast<std::size_t>(row_length));
    for (std::int64_t row = range.begin(); row != range.end(); ++row) {
      const std::int64_t oh = row % d.p;
      float* yv = write_f32(y, row * row_length, buffer.data());
      if (nhwc) {
        const float* image = x.data() + row / d.p * d.h * d.w * d.c;
        for (std::int64_t ow = 0; ow < d.q; ++ow) {
          float* out = yv + ow * d.c;
          std::fill_n(out, d.c, start);
          std::int64_t inside = 0;
          const std::int64_t padded = for_window(p, d, oh, ow, [&](std::int64_t h, std::int64_t w) {
            const float* pixel = image + (h * d.w + w) * d.c;
            for (std::int64_t c = 0; c < d.c; ++c) combine(out[c], pixel[c]);
            ++inside;
          });
          if (is_max) continue;
          const float scale = average_scale(inside, padded);
          for (std::int64_t c = 0; c < d.c; ++c) out[c] *= scale;
        }
      } else {
        const float* plane = x.data() + row / d.p * d.h * d.w;
        for (std::int64_t ow = 0; ow < d.q; ++ow) {
          float acc = start;
          std::int64_t inside = 0;
          const std::int64_t padded = for_window(p, d, oh, ow, [&](std::int64_t h, std::int64_t w) {
            combine(acc, plane[h * d.w + w]);
            ++inside;
          });
          yv[ow] = is_max ? acc : acc * average_scale(inside, padded);
        }
      }
      store_f32(y, row * row_length, row_length, yv);
    }
  });
}

}  // namespace

void cpu_max_pool2d(const HostOpArgs& args) { pool<true>(args); }
void cpu_avg_pool2d(const HostOpArgs& args) { pool<false>(args); }

void cpu_global_avg_pool(const HostOpArgs& args) {
  const PoolDims d = global_pool_dims(args.inputs[0].shape(), std::get<GlobalPoolParams>(args.node.params));
  const F32Input x(args.inputs[0]);
  const HostTensor& y = args.output;
  const std::int64_t area = d.h * d.w;
  const float scale = 1.0f / static_cast<float>(area);
  if (d.layout == Layout::NHWC) {
    // One image per task, its pixels summed as rows of channels.
    tbb::parallel_for(std::int64_t{0}, d.n, [&](std::int64_t n) {
      std::vector<float> sum(static_cast<std::size_t>(d.c), 0.0f);
      const float* pixel = x.data() + n * area * d.c;
      for (std::int64_t i = 0; i < area; ++i, pixel += d.c)
        for (std::int64_t c = 0; c < d.c; ++c) sum[static_cast<std::size_t>(c)] += pixel[c];
      for (std::int64_t c = 0; c < d.c; ++c) y.store(n * d.c + c, sum[static_cast<std::size_t>(c)] * scale);
    });
    return;
  }
  const auto planes = tbb::blocked_range<std::int64_t>(0, y.numel());
  tbb::parallel_for(planes, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t plane = range.begin(); plane != range.end(); ++plane) {
      // Eight interleaved partial sums: vectorisable, and more accurate than one running sum.
      constexpr std::int64_t lanes = 8;
      float partial[lanes] = {};
      const float* values = x.data() + plane * area;
      std::int64_t i = 0;
      for (; i + lanes <= area; i += lanes) {
        for (std::int64_t l = 0; l < lanes; ++l) partial[l] += values[i + l];
      }
      for (; i < area; ++i) partial[i % lanes] += values[i];
      float sum = 0.0f;
      for (float v : partial) sum += v;
      y.store(plane, sum / static_cast<float>(area));
    }
  });
}

}  // namespace porta::detail
