// Reference kernels of the backward ops and the fused loss, in double.
#include <variant>

#include "core/ref/kernels.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void ref_activation_backward(const HostOpArgs& args) {
  const ActivationGradient f = activation_gradient(std::get<ActivationBackwardParams>(args.node.params));
  const HostTensor &x = args.inputs[0], &dy = args.inputs[1];
  for (std::int64_t i = 0; i < args.output.numel(); ++i) {
    const auto at = static_cast<std::size_t>(i);
    args.output.store(at, static_cast<float>(double{dy.load(at)} * activation_derivative(f, double{x.load(at)})));
  }
}

// Each window adds its dy to the element it took; overlapping windows add up.
void ref_max_pool2d_backward(const HostOpArgs& args) {
  const auto& p = std::get<Pool2dParams>(args.node.params);
  const HostTensor &x = args.inputs[0], &dy = args.inputs[1];
  const PoolDims d = pool_dims(x.shape(), p);
  const ActivationIndex x_at = d.x_index(), y_at = d.y_index();
  std::vector<double> dx(static_cast<std::size_t>(x.numel()), 0.0);
  for (std::int64_t n = 0; n < d.n; ++n)
    for (std::int64_t c = 0; c < d.c; ++c)
      for (std::int64_t oh = 0; oh < d.p; ++oh)
        for (std::int64_t ow = 0; ow < d.q; ++ow) {
          const auto at = [&](std::int64_t h, std::int64_t w) { return static_cast<std::size_t>(x_at(n, c, h, w)); };
          const WindowPosition m = window_argmax(p, d.h, d.w, oh, ow, [&](auto h, auto w) { return x.load(at(h, w)); });
          if (m.h >= 0) dx[at(m.h, m.w)] += dy.load(static_cast<std::size_t>(y_at(n, c, oh, ow)));
        }
  for (std::size_t i = 0; i < dx.size(); ++i) args.output.store(i, static_cast<float>(dx[i]));
}

// Float labels: the sum over the row's labels; i64/i32 class labels: the one class's term.
void ref_softmax_cross_entropy(const HostOpArgs& args) {
  const HostTensor &z = args.inputs[0], &l = args.inputs[1];
  const std::int64_t classes = z.shape().back(), rows = z.numel() / classes;
  const bool indices = !is_float(l.dtype());
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto at = [&](std::int64_t c) { return static_cast<std::size_t>(r * classes + c); };
    const auto logit = [&](std::int64_t c) { return z.load(at(c)); };
    const double loss =
        indices ? cross_entropy_index_row<double>(
                      classes, logit, label_coordinate(load_as_i64(l.data, static_cast<std::size_t>(r), l.dtype()),
                                                       classes, args.node))
                : cross_entropy_row<double>(classes, logit, [&](std::int64_t c) { return l.load(at(c)); });
    args.output.store(static_cast<std::size_t>(r), static_cast<float>(loss));
  }
}

// dy (softmax(z) - one_hot(label)) per row, in double.
void ref_softmax_cross_entropy_backward(const HostOpArgs& args) {
  const HostTensor &z = args.inputs[0], &l = args.inputs[1], &dy = args.inputs[2];
  const std::int64_t classes = z.shape().back(), rows = z.numel() / classes;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto at = [&](std::int64_t c) { return static_cast<std::size_t>(r * classes + c); };
    const auto row = static_cast<std::size_t>(r);
    const std::int64_t label = label_coordinate(load_as_i64(l.data, row, l.dtype()), classes, args.node);
    const auto logit = [&](std::int64_t c) { return double{z.load(at(c))}; };
    const double top = row_max<double>(classes, logit), sum = exp_sum_row<double>(classes, logit, top);
    const double d = dy.load(row);
    for (std::int64_t c = 0; c < classes; ++c) {
      const double g = cross_entropy_index_gradient<double>(logit(c), top, sum, c == label, d);
      args.output.store(at(c), static_cast<float>(g));
    }
  }
}

}  // namespace porta::detail
