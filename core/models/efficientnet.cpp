// EfficientNet B0-B7 as torchvision defines them: MBConv blocks (expand 1x1, depthwise k x k,
// squeeze-and-excitation, project 1x1) with SiLU, scaled in width, depth and resolution.
#include <cmath>
#include <string>

#include "core/models/layers.hpp"
#include "porta/error.hpp"
#include "porta/models.hpp"

namespace porta::models {
namespace {

using detail::Layers;

struct Scaling {
  double width, depth;
  std::int64_t resolution;
};
constexpr Scaling scalings[] = {{1.0, 1.0, 224}, {1.0, 1.1, 240}, {1.1, 1.2, 260}, {1.2, 1.4, 300},
                                {1.4, 1.8, 380}, {1.6, 2.2, 456}, {1.8, 2.6, 528}, {2.0, 3.1, 600}};

struct Stage {
  std::int64_t expand, kernel, stride, channels, layers;
};
constexpr Stage stages[] = {{1, 3, 1, 16, 1},  {6, 3, 2, 24, 2},  {6, 5, 2, 40, 2}, {6, 3, 2, 80, 3},
                            {6, 5, 1, 112, 3}, {6, 5, 2, 192, 4}, {6, 3, 1, 320, 1}};

// Channels scaled by the width factor, rounded to a multiple of 8 without losing more than 10%.
std::int64_t scaled_channels(std::int64_t channels, double width) {
  const double v = static_cast<double>(channels) * width;
  std::int64_t rounded = std::max<std::int64_t>(8, static_cast<std::int64_t>(v + 4) / 8 * 8);
  if (static_cast<double>(rounded) < 0.9 * v) rounded += 8;
  return rounded;
}

// torchvision's dropout before the classifier, B0 to B7, and the limit the blocks' stochastic depth rises to.
constexpr float classifier_dropout[] = {0.2f, 0.2f, 0.3f, 0.3f, 0.4f, 0.4f, 0.5f, 0.5f};
constexpr double stochastic_depth = 0.2;

// An MBConv block; `depth_drop` is the stochastic depth of its residual branch (used in training).
Tensor mbconv(Layers& l, Tensor x, const Stage& s, std::int64_t stride, std::int64_t filters, float depth_drop,
              const std::string& name) {
  Graph& g = l.g;
  const std::int64_t channels = g.shape(x)[1], expanded = channels * s.expand;
  Tensor y = x;
  if (s.expand != 1) y = l.conv_bn(y, {.filters = expanded, .kernel = 1}, Activation::Silu, name + ".expand");
  y = l.conv_bn(y, {.filters = expanded, .kernel = s.kernel, .stride = stride, .groups = expanded}, Activation::Silu,
                name + ".depthwise");
  // Squeeze-and-excitation: channel weights from the pooled features.
  Tensor se = g.global_avg_pool(y, name + ".se.pool");
  se = g.silu(l.conv_bias(se, std::max<std::int64_t>(1, channels / 4), name + ".se.reduce"), name + ".se.act");
  se = g.sigmoid(l.conv_bias(se, expanded, name + ".se.expand"), name + ".se.gate");
  y = g.mul(y, se, name + ".se.scale");
  y = l.conv_bn(y, {.filters = filters, .kernel = 1}, Activation::None, name + ".project");
  if (stride != 1 || channels != filters) return y;
  return g.add(l.dropout(y, depth_drop, 1, name + ".stochastic_depth"), x, name + ".add");
}

}  // namespace

Graph efficientnet(int variant, const ModelOptions& o) {
  if (variant < 0 || variant > 7)
    throw Error(ErrorCode::InvalidArgument, "efficientnet variant " + std::to_string(variant) + " does not exist: B0 to B7");
  const Scaling& scale = scalings[variant];
  Graph g;
  Layers l(g, o.dtype, o.seed);
  const std::int64_t size = o.resolution > 0 ? o.resolution : scale.resolution;
  Tensor x = g.input("input", {o.batch, 3, size, size}, o.dtype);
  x = l.conv_bn(x, {.filters = scaled_channels(32, scale.width), .kernel = 3, .stride = 2}, Activation::Silu, "stem");
  const auto layers_of = [&](const Stage& s) {
    return static_cast<std::int64_t>(std::ceil(static_cast<double>(s.layers) * scale.depth));
  };
  std::int64_t blocks = 0, block = 0;
  for (const Stage& s : stages) blocks += layers_of(s);
  for (std::size_t i = 0; i < std::size(stages); ++i) {
    const Stage& s = stages[i];
    for (std::int64_t b = 0; b < layers_of(s); ++b, ++block) {
      // Stochastic depth rises linearly over the blocks, from 0 at the first (torchvision).
      const double drop = o.training ? stochastic_depth * static_cast<double>(block) / static_cast<double>(blocks) : 0;
      x = mbconv(l, x, s, b == 0 ? s.stride : 1, scaled_channels(s.channels, scale.width), static_cast<float>(drop),
                 "stage" + std::to_string(i + 1) + "." + std::to_string(b));
    }
  }
  x = l.conv_bn(x, {.filters = 4 * g.shape(x)[1], .kernel = 1}, Activation::Silu, "head");
  x = g.flatten(g.global_avg_pool(x, "avgpool"), 1, "flatten");
  x = l.dropout(x, o.training ? classifier_dropout[variant] : 0.0f, -1, "classifier.dropout");
  g.output("logits", l.linear(x, o.classes, "classifier"));
  return g;
}

}  // namespace porta::models
