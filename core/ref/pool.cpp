#include <algorithm>
#include <limits>
#include <variant>

#include "core/ref/kernels.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

// Calls reduce(at, h0, w0) for every output element, where at(h, w) is the input index of its
// channel at (h, w) and (h0, w0) the input position of its window's first element.
template <class Reduce> void pool(const HostOpArgs& args, const PoolDims& d, Reduce reduce) {
  const auto& p = std::get<Pool2dParams>(args.node.params);
  const ActivationIndex x_at = d.x_index(), y_at = d.y_index();
  for (std::int64_t n = 0; n < d.n; ++n)
    for (std::int64_t c = 0; c < d.c; ++c) {
      const auto at = [&](std::int64_t h, std::int64_t w) { return static_cast<std::size_t>(x_at(n, c, h, w)); };
      for (std::int64_t oh = 0; oh < d.p; ++oh)
        for (std::int64_t ow = 0; ow < d.q; ++ow) {
          const std::int64_t h0 = oh * p.stride[0] - p.pad[0];
          const std::int64_t w0 = ow * p.stride[1] - p.pad[1];
          args.output.store(static_cast<std::size_t>(y_at(n, c, oh, ow)), static_cast<float>(reduce(at, h0, w0)));
        }
    }
}

}  // namespace

void ref_max_pool2d(const HostOpArgs& args) {
  const auto& p = std::get<Pool2dParams>(args.node.params);
  const HostTensor& x = args.inputs[0];
  const PoolDims d = pool_dims(x.shape(), p);
  pool(args, d, [&](const auto& at, std::int64_t h0, std::int64_t w0) {
    // A window that covers no input element (odd ceil_mode cases) yields -inf, as in PyTorch.
    double best = -std::numeric_limits<double>::infinity();
    for (std::int64_t i = 0; i < p.kernel[0]; ++i) {
      const std::int64_t h = h0 + i * p.dilation[0];
      if (h < 0 || h >= d.h) continue;
      for (std::int64_t j = 0; j < p.kernel[1]; ++j) {
        const std::int64_t w = w0 + j * p.dilation[1];
        if (w < 0 || w >= d.w) continue;
        best = std::max(best, double{x.load(at(h, w))});
      }
    }
    return best;
  });
}

void ref_avg_pool2d(const HostOpArgs& args) {
  const auto& p = std::get<Pool2dParams>(args.node.params);
  const HostTensor& x = args.inputs[0];
  const PoolDims d = pool_dims(x.shape(), p);
  pool(args, d, [&](const auto& at, std::int64_t h0, std::int64_t w0) {
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
          sum += x.load(at(h, w));
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
  const PoolDims d = global_pool_dims(x.shape(), std::get<GlobalPoolParams>(args.node.params));
  const ActivationIndex x_at = d.x_index();
  for (std::int64_t n = 0; n < d.n; ++n)
    for (std::int64_t c = 0; c < d.c; ++c) {
      double sum = 0.0;
      for (std::int64_t h = 0; h < d.h; ++h)
        for (std::int64_t w = 0; w < d.w; ++w) sum += x.load(static_cast<std::size_t>(x_at(n, c, h, w)));
      // [N, C, 1, 1] and [N, 1, 1, C] are both stored as n * C + c.
      args.output.store(static_cast<std::size_t>(n * d.c + c), static_cast<float>(sum / static_cast<double>(d.h * d.w)));
    }
}

}  // namespace porta::detail
