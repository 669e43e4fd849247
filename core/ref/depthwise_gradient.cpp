// depthwise_filter_gradient's reference kernel: the formula of core/runtime/backward_math.h in
// double, per image, summed over the images in order.
#include <variant>

#include "core/ref/kernels.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void ref_depthwise_filter_gradient(const HostOpArgs& args) {
  const auto& p = std::get<Conv2dParams>(args.node.params);
  const HostTensor &x = args.inputs[0], &dy = args.inputs[1];
  const ConvDims d = depthwise_gradient_dims(x.shape(), dy.shape(), p);
  const ActivationIndex x_at = d.x_index(), y_at = d.y_index();
  for (std::int64_t c = 0; c < d.c; ++c)
    for (std::int64_t r = 0; r < d.r; ++r)
      for (std::int64_t s = 0; s < d.s; ++s) {
        double sum = 0.0;
        for (std::int64_t n = 0; n < d.n; ++n) {
          const auto x_plane = [&](std::int64_t h, std::int64_t w) {
            return x.load(static_cast<std::size_t>(x_at(n, c, h, w)));
          };
          const auto dy_plane = [&](std::int64_t h, std::int64_t w) {
            return dy.load(static_cast<std::size_t>(y_at(n, c, h, w)));
          };
          sum += depthwise_tap_gradient<double>(p, d.h, d.w, d.p, d.q, r, s, x_plane, dy_plane);
        }
        args.output.store(static_cast<std::size_t>((c * d.r + r) * d.s + s), static_cast<float>(sum));
      }
}

}  // namespace porta::detail
