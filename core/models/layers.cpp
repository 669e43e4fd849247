#include "core/models/layers.hpp"

#include <cmath>
#include <vector>

#include "porta/autodiff.hpp"

namespace porta::models::detail {

float Layers::next_uniform() {
  // splitmix64: fast, and the same sequence on every platform.
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * 0x1.0p-24f;  // [0, 1)
}

Tensor Layers::random(const std::string& name, const Shape& shape, float lo, float hi) {
  std::int64_t count = 1;
  for (const std::int64_t d : shape) count *= d;
  std::vector<float> values(static_cast<std::size_t>(count));
  for (float& v : values) v = lo + (hi - lo) * next_uniform();
  return g.constant(name, shape, values, dtype_);
}

Tensor Layers::activate(Tensor x, Activation act, const std::string& name) {
  switch (act) {
    case Activation::None: return x;
    case Activation::Relu: return g.relu(x, name);
    case Activation::Relu6: return g.relu6(x, name);
    case Activation::Sigmoid: return g.sigmoid(x, name);
    case Activation::Silu: return g.silu(x, name);
    case Activation::Tanh: return g.tanh(x, name);
    case Activation::Gelu: return g.gelu(x, {}, name);
  }
  return x;
}

Tensor Layers::dropout(Tensor x, float ratio, std::int32_t mask_dims, const std::string& name) {
  if (ratio == 0.0f) return x;
  if (!step_) step_ = autodiff::step_counter(g);
  // Distinct seeds for the nodes, so that equal shapes do not share masks; the weights' seed mixed in.
  const std::uint64_t seed = (seed_ + ++dropouts_) * 0x9e3779b97f4a7c15ull;
  return g.dropout(x, *step_, {.ratio = ratio, .seed = seed, .mask_dims = mask_dims}, name);
}

Tensor Layers::conv_bn(Tensor x, const ConvSpec& spec, Activation act, const std::string& name) {
  const std::int64_t channels = g.shape(x)[1] / spec.groups;
  const float bound = std::sqrt(6.0f / static_cast<float>(channels * spec.kernel * spec.kernel));
  const Tensor w = random(name + ".weight", {spec.filters, channels, spec.kernel, spec.kernel}, -bound, bound);
  const std::int64_t pad = (spec.kernel - 1) / 2;
  Conv2dParams p{.stride = {spec.stride, spec.stride}, .pad = {pad, pad, pad, pad}, .groups = spec.groups};
  const Tensor y = g.conv2d(x, w, p, {}, name);
  const Shape c{spec.filters};
  const Tensor bn = g.batchnorm(y, random(name + ".bn.scale", c, 0.5f, 1.0f), random(name + ".bn.bias", c, -0.1f, 0.1f),
                                random(name + ".bn.mean", c, -0.1f, 0.1f), random(name + ".bn.var", c, 0.5f, 1.5f),
                                {}, name + ".bn");
  return activate(bn, act, name + ".act");
}

Tensor Layers::conv_bias(Tensor x, std::int64_t filters, const std::string& name) {
  const std::int64_t channels = g.shape(x)[1];
  const float bound = std::sqrt(6.0f / static_cast<float>(channels));
  return g.conv2d(x, random(name + ".weight", {filters, channels, 1, 1}, -bound, bound), {},
                  random(name + ".bias", {filters}, -0.1f, 0.1f), name);
}

Tensor Layers::linear(Tensor x, std::int64_t features, const std::string& name) {
  return linear(x, features, name + ".weight", name + ".bias", name);
}

Tensor Layers::linear(Tensor x, std::int64_t features, const std::string& weight, const std::string& bias,
                      const std::string& name) {
  const std::int64_t inputs = g.shape(x)[1];
  const float bound = 1.0f / std::sqrt(static_cast<float>(inputs));
  return g.gemm(x, random(weight, {features, inputs}, -bound, bound), {.trans_b = true},
                random(bias, {features}, -bound, bound), name);
}

Tensor Layers::layer_norm(Tensor x, float epsilon, const std::string& name) {
  const Shape features{g.shape(x).back()};
  return g.layer_norm(x, random(name + ".weight", features, 0.8f, 1.2f), random(name + ".bias", features, -0.1f, 0.1f),
                      {.axis = -1, .epsilon = epsilon}, name);
}

}  // namespace porta::models::detail
