#include <algorithm>
#include <limits>
#include <variant>

#include "core/ref/kernels.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

// Calls reduce(plane, h0, w0) for every output element in order, where plane is the element
// offset of its input [H, W] plane and (h0, w0) the input position of its window's first element.
template <class Reduce> void pool(const HostOpArgs& args, const PoolDims& d, Reduce reduce) {
  const auto& p = std::get<Pool2dParams>(args.node.params);
  std::int64_t y_index = 0;
  for (std::int64_t plane = 0; plane < d.n * d.c; ++plane) {
    for (std::int64_t oh = 0; oh < d.p; ++oh) {
      for (std::int64_t ow = 0; ow < d.q; ++ow) {
        const std::int64_t h0 = oh * p.stride[0] - p.pad[0];
        const std::int64_t w0 = ow * p.stride[1] - p.pad[1];
        args.output.store(y_index++, static_cast<float>(reduce(plane * d.h * d.w, h0, w0)));
      }
    }
  }
}

}  // namespace

void ref_max_pool2d(const HostOpArgs& args) {
  const auto& p = std::get<Pool2dParams>(args.node.params);
  const HostTensor& x = args.inputs[0];
  const PoolDims d = pool_dims(x.shape(), p);
  pool(args, d, [&](std::int64_t plane, std::int64_t h0, std::int64_t w0) {
    // A window that covers no input element (odd ceil_mode cases) yields -inf, as in PyTorch.
    double best = -std::numeric_limits<double>::infinity();
    for (std::int64_t i = 0; i < p.kernel[0]; ++i) {
      const std::int64_t h = h0 + i * p.dilation[0];
      if (h < 0 || h >= d.h) continue;
      for (std::int64_t j = 0; j < p.kernel[1]; ++j) {
        const std::int64_t w = w0 + j * p.dilation[1];
        if (w < 0 || w >= d.w) continue;
        best = std::max(best, double{x.load(plane + h * d.w + w)});
      }
    }
    return best;
  });
}

void ref_avg_pool2d(const HostOpArgs& args) {
  const auto& p = std::get<Pool2dParams>(args.node.params);
  const HostTensor& x = args.inputs[0];
  const PoolDims d = pool_dims(x.shape(), p);
  pool(args, d, [&](std::int64_t plane, std::int64_t h0, std::int64_t w0) {
    double sum = 0.0;
    std::int64_t inside = 0;  // window positions inside the input
    std::int64_t padded = 0;  // window positions inside the padded input; ceil_mode can overhang
    for (std::int64_t i = 0; i < p.kernel[0]; ++i) {
      const std::int64_t h = h0 + i * p.dilation[0];
      for (std::int64_t j = 0; j < p.kernel[1]; ++j) {
        const std::int64_t w = w0 + j * p.dilation[1];
        if (h >= -p.pad[0] && h < d.h + p.pad[2] && w >= -p.pad[1] && w < d.w + p.pad[3]) {
          ++padded;
        }
        if (h >= 0 && h < d.h && w >= 0 && w < d.w) {
          sum += x.load(plane + h * d.w + w);
          ++inside;
        }
      }
    }
    const std::int64_t count = p.count_include_pad ? padded : inside;
    return count == 0 ? 0.0 : sum / static_cast<double>(count);
  });
}

void ref_global_avg_pool(const HostOpArgs& args) {
  const HostTensor& x = args.inputs[0];
  const std::int64_t area = x.shape()[2] * x.shape()[3];
  for (std::int64_t plane = 0; plane < args.output.numel(); ++plane) {
    double sum = 0.0;
    for (std::int64_t i = 0; i < area; ++i) sum += x.load(plane * area + i);
    args.output.store(plane, static_cast<float>(sum / static_cast<double>(area)));
  }
}

}  // namespace porta::detail
