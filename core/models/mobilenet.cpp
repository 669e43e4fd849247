// MobileNet-V2 as torchvision defines it: inverted residual blocks (expand 1x1, depthwise 3x3,
// linear project 1x1) with ReLU6, the residual where stride and width allow.
#include <string>

#include "core/models/layers.hpp"
#include "porta/models.hpp"

namespace porta::models {
namespace {

using detail::Layers;

struct Stage {
  std::int64_t expand, channels, layers, stride;
};
constexpr Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                            {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};

Tensor inverted_residual(Layers& l, Tensor x, std::int64_t expand, std::int64_t stride, std::int64_t filters,
                         const std::string& name) {
  const std::int64_t channels = l.g.shape(x)[1], expanded = channels * expand;
  Tensor y = x;
  if (expand != 1) y = l.conv_bn(y, {.filters = expanded, .kernel = 1}, Activation::Relu6, name + ".expand");
  y = l.conv_bn(y, {.filters = expanded, .kernel = 3, .stride = stride, .groups = expanded}, Activation::Relu6,
                name + ".depthwise");
  y = l.conv_bn(y, {.filters = filters, .kernel = 1}, Activation::None, name + ".project");
  return stride == 1 && channels == filters ? l.g.add(y, x, name + ".add") : y;
}

}  // namespace

Graph mobilenet_v2(const ModelOptions& o) {
  Graph g;
  Layers l(g, o.dtype, o.seed);
  const std::int64_t size = o.resolution > 0 ? o.resolution : 224;
  Tensor x = g.input("input", {o.batch, 3, size, size}, o.dtype);
  x = l.conv_bn(x, {.filters = 32, .kernel = 3, .stride = 2}, Activation::Relu6, "stem");
  for (std::size_t i = 0; i < std::size(stages); ++i) {
    const Stage& s = stages[i];
    for (std::int64_t b = 0; b < s.layers; ++b)
      x = inverted_residual(l, x, s.expand, b == 0 ? s.stride : 1, s.channels,
                            "stage" + std::to_string(i + 1) + "." + std::to_string(b));
  }
  x = l.conv_bn(x, {.filters = 1280, .kernel = 1}, Activation::Relu6, "head");
  x = g.flatten(g.global_avg_pool(x, "avgpool"), 1, "flatten");
  x = l.dropout(x, o.training ? 0.2f : 0.0f, -1, "classifier.dropout");  // torchvision's training dropout
  g.output("logits", l.linear(x, o.classes, "classifier"));
  return g;
}

}  // namespace porta::models
