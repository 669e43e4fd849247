// ResNet-50 as torchvision defines it (v1.5: the stride sits on each bottleneck's 3x3 conv).
#include <string>

#include "core/models/layers.hpp"
#include "porta/models.hpp"

namespace porta::models {
namespace {

using detail::Layers;

// 1x1 reduce -> 3x3 -> 1x1 expand (x4), plus the shortcut, then relu.
Tensor bottleneck(Layers& l, Tensor x, std::int64_t width, std::int64_t stride, const std::string& name) {
  const std::int64_t filters = width * 4;
  Tensor shortcut = x;
  if (stride != 1 || l.g.shape(x)[1] != filters)
    shortcut = l.conv_bn(x, {.filters = filters, .kernel = 1, .stride = stride}, Activation::None, name + ".downsample");
  Tensor y = l.conv_bn(x, {.filters = width, .kernel = 1}, Activation::Relu, name + ".conv1");
  y = l.conv_bn(y, {.filters = width, .kernel = 3, .stride = stride}, Activation::Relu, name + ".conv2");
  y = l.conv_bn(y, {.filters = filters, .kernel = 1}, Activation::None, name + ".conv3");
  return l.g.relu(l.g.add(y, shortcut, name + ".add"), name + ".relu");
}

}  // namespace

Graph resnet50(const ModelOptions& o) {
  Graph g;
  Layers l(g, o.dtype, o.seed);
  const std::int64_t size = o.resolution > 0 ? o.resolution : 224;
  Tensor x = g.input("input", {o.batch, 3, size, size}, o.dtype);
  x = l.conv_bn(x, {.filters = 64, .kernel = 7, .stride = 2}, Activation::Relu, "conv1");
  x = g.max_pool2d(x, {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1, 1, 1}}, "maxpool");
  constexpr std::int64_t blocks[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const std::int64_t width = std::int64_t{64} << stage;
    for (std::int64_t b = 0; b < blocks[stage]; ++b)
      x = bottleneck(l, x, width, b == 0 && stage > 0 ? 2 : 1,
                     "layer" + std::to_string(stage + 1) + "." + std::to_string(b));
  }
  x = g.flatten(g.global_avg_pool(x, "avgpool"), 1, "flatten");
  g.output("logits", l.linear(x, o.classes, "fc"));
  return g;
}

}  // namespace porta::models
