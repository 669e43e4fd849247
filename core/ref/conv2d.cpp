#include <variant>

#include "core/ref/kernels.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void ref_conv2d(const HostOpArgs& args) {
  const auto& params = std::get<Conv2dParams>(args.node.params);
  const HostTensor& x = args.inputs[0];
  const HostTensor& w = args.inputs[1];
  const ConvSlots slots = conv_slots(args.node);
  const HostTensor* bias = slots.bias >= 0 ? &args.inputs[slots.bias] : nullptr;
  const HostTensor* residual = slots.residual >= 0 ? &args.inputs[slots.residual] : nullptr;
  const ConvDims d = conv_dims(x.shape(), w.shape(), params);
  const auto [stride_h, stride_w] = params.stride;
  const auto [dil_h, dil_w] = params.dilation;
  const std::int64_t pad_top = params.pad[0], pad_left = params.pad[1];

  const ActivationIndex x_at = d.x_index(), y_at = d.y_index();
  for (std::int64_t n = 0; n < d.n; ++n) {
    for (std::int64_t k = 0; k < d.k; ++k) {
      const std::int64_t first_channel = (k / d.k_per_group) * d.c_per_group;
      for (std::int64_t oh = 0; oh < d.p; ++oh) {
        for (std::int64_t ow = 0; ow < d.q; ++ow) {
          double sum = bias ? bias->load(k) : 0.0;
          for (std::int64_t c = 0; c < d.c_per_group; ++c) {
            for (std::int64_t r = 0; r < d.r; ++r) {
              const std::int64_t h = oh * stride_h - pad_top + r * dil_h;
              if (h < 0 || h >= d.h) continue;  // zero padding
              for (std::int64_t s = 0; s < d.s; ++s) {
                const std::int64_t iw = ow * stride_w - pad_left + s * dil_w;
                if (iw < 0 || iw >= d.w) continue;
                const double xv = x.load(static_cast<std::size_t>(x_at(n, first_channel + c, h, iw)));
                const double wv = w.load(((k * d.c_per_group + c) * d.r + r) * d.s + s);
                sum += xv * wv;
              }
            }
          }
          const auto y_index = static_cast<std::size_t>(y_at(n, k, oh, ow));
          if (residual) sum += residual->load(y_index);
          args.output.store(y_index, static_cast<float>(activate(params.activation, sum)));
        }
      }
    }
  }
}

}  // namespace porta::detail
