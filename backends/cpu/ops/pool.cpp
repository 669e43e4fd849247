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

// Computes every output row in parallel, element (oh, ow) as reduce(x_plane, h0, w0), where
// x_plane is its input [H, W] plane and (h0, w0) the input position of its window's first element.
template <class Reduce> void pool(const HostOpArgs& args, const PoolDims& d, Reduce reduce) {
  const auto& p = std::get<Pool2dParams>(args.node.params);
  const F32Input x(args.inputs[0]);
  const HostTensor& y = args.output;
  const auto output_rows = tbb::blocked_range<std::int64_t>(0, d.n * d.c * d.p);
  tbb::parallel_for(output_rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    std::vector<float> buffer(d.q);
    for (std::int64_t row = range.begin(); row != range.end(); ++row) {
      const float* x_plane = x.data() + row / d.p * d.h * d.w;
      const std::int64_t h0 = row % d.p * p.stride[0] - p.pad[0];
      float* yv = write_f32(y, row * d.q, buffer.data());
      for (std::int64_t ow = 0; ow < d.q; ++ow) {
        yv[ow] = reduce(x_plane, h0, ow * p.stride[1] - p.pad[1]);
      }
      store_f32(y, row * d.q, d.q, yv);
    }
  });
}

}  // namespace

void cpu_max_pool2d(const HostOpArgs& args) {
  const auto& p = std::get<Pool2dParams>(args.node.params);
  const PoolDims d = pool_dims(args.inputs[0].shape(), p);
  pool(args, d, [&](const float* x_plane, std::int64_t h0, std::int64_t w0) {
    // A window that covers no input element (odd ceil_mode cases) yields -inf, as in PyTorch.
    float best = -std::numeric_limits<float>::infinity();
    for (std::int64_t i = 0; i < p.kernel[0]; ++i) {
      const std::int64_t h = h0 + i * p.dilation[0];
      if (h < 0 || h >= d.h) continue;
      for (std::int64_t j = 0; j < p.kernel[1]; ++j) {
        const std::int64_t w = w0 + j * p.dilation[1];
        if (w >= 0 && w < d.w) best = std::max(best, x_plane[h * d.w + w]);
      }
    }
    return best;
  });
}

void cpu_avg_pool2d(const HostOpArgs& args) {
  const auto& p = std::get<Pool2dParams>(args.node.params);
  const PoolDims d = pool_dims(args.inputs[0].shape(), p);
  pool(args, d, [&](const float* x_plane, std::int64_t h0, std::int64_t w0) {
    float sum = 0.0f;
    std::int64_t inside = 0;  // window positions inside the input
    std::int64_t padded = 0;  // window positions inside the padded input; ceil_mode can overhang
    for (std::int64_t i = 0; i < p.kernel[0]; ++i) {
      const std::int64_t h = h0 + i * p.dilation[0];
      const bool h_padded = h >= -p.pad[0] && h < d.h + p.pad[2];
      const bool h_inside = h >= 0 && h < d.h;
      for (std::int64_t j = 0; j < p.kernel[1]; ++j) {
        const std::int64_t w = w0 + j * p.dilation[1];
        if (h_padded && w >= -p.pad[1] && w < d.w + p.pad[3]) ++padded;
        if (h_inside && w >= 0 && w < d.w) {
          sum += x_plane[h * d.w + w];
          ++inside;
        }
      }
    }
    const std::int64_t count = p.count_include_pad ? padded : inside;
    return count == 0 ? 0.0f : sum / static_cast<float>(count);
  });
}

void cpu_global_avg_pool(const HostOpArgs& args) {
  const F32Input x(args.inputs[0]);
  const HostTensor& y = args.output;
  const std::int64_t area = args.inputs[0].shape()[2] * args.inputs[0].shape()[3];
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
