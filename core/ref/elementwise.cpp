#include <cmath>
#include <functional>
#include <variant>

#include "core/ref/kernels.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

template <class Op> void binary(const HostOpArgs& args, Op op) {
  const HostTensor& a = args.inputs[0];
  const HostTensor& b = args.inputs[1];
  const BroadcastIndex a_index(a.shape(), args.output.shape());
  const BroadcastIndex b_index(b.shape(), args.output.shape());
  for (std::int64_t i = 0; i < args.output.numel(); ++i) {
    const double av = a.load(a_index(i));
    const double bv = b.load(b_index(i));
    args.output.store(i, static_cast<float>(op(av, bv)));
  }
}

template <class Op> void unary(const HostOpArgs& args, Op op) {
  const HostTensor& x = args.inputs[0];
  for (std::int64_t i = 0; i < args.output.numel(); ++i) {
    args.output.store(i, static_cast<float>(op(double{x.load(i)})));
  }
}

}  // namespace

void ref_add(const HostOpArgs& args) { binary(args, std::plus<double>{}); }
void ref_sub(const HostOpArgs& args) { binary(args, std::minus<double>{}); }
void ref_mul(const HostOpArgs& args) { binary(args, std::multiplies<double>{}); }
void ref_div(const HostOpArgs& args) { binary(args, std::divides<double>{}); }

void ref_relu(const HostOpArgs& args) {
  unary(args, [](double x) { return activate(Activation::Relu, x); });
}

void ref_clip(const HostOpArgs& args) {
  const auto& p = std::get<ClipParams>(args.node.params);
  unary(args, [lo = double{p.min}, hi = double{p.max}](double x) { return clip(x, lo, hi); });
}

void ref_sigmoid(const HostOpArgs& args) { unary(args, sigmoid<double>); }
void ref_silu(const HostOpArgs& args) { unary(args, silu<double>); }
void ref_tanh(const HostOpArgs& args) {
  unary(args, [](double x) { return std::tanh(x); });
}

void ref_gelu(const HostOpArgs& args) {
  const bool tanh_approximation = std::get<GeluParams>(args.node.params).tanh_approximation;
  unary(args, [tanh_approximation](double x) { return gelu(x, tanh_approximation); });
}

void ref_erf(const HostOpArgs& args) {
  unary(args, [](double x) { return std::erf(x); });
}
void ref_sqrt(const HostOpArgs& args) {
  unary(args, [](double x) { return std::sqrt(x); });
}
void ref_reciprocal(const HostOpArgs& args) {
  unary(args, [](double x) { return 1.0 / x; });
}
void ref_hard_sigmoid(const HostOpArgs& args) {
  const auto& p = std::get<HardSigmoidParams>(args.node.params);
  unary(args, [alpha = double{p.alpha}, beta = double{p.beta}](double x) { return hard_sigmoid(x, alpha, beta); });
}
void ref_hard_swish(const HostOpArgs& args) { unary(args, hard_swish<double>); }
void ref_pow(const HostOpArgs& args) {
  binary(args, [](double a, double b) { return std::pow(a, b); });
}

// The conversion is in load and store: the output tensor has the target dtype. Between integer
// dtypes it goes through int64, exact where a float would round.
void ref_cast(const HostOpArgs& args) {
  const HostTensor& x = args.inputs[0];
  if (is_float(x.dtype()) || is_float(args.output.dtype())) {
    unary(args, [](double v) { return v; });
    return;
  }
  for (std::int64_t i = 0; i < args.output.numel(); ++i)
    store_from_i64(args.output.data, static_cast<std::size_t>(i), args.output.dtype(),
                   load_as_i64(x.data, static_cast<std::size_t>(i), x.dtype()));
}

}  // namespace porta::detail
