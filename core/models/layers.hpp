#pragma once
// Layer helpers shared by the model builders: seeded weights and the conv + batchnorm + activation
// unit that both ResNet and EfficientNet are made of.
#include <cstdint>
#include <optional>
#include <string>

#include "porta/graph.hpp"

namespace porta::models::detail {

struct ConvSpec {
  std::int64_t filters = 1, kernel = 1, stride = 1, groups = 1;
};

// Builds layers into a graph with weights drawn from one seeded stream, so a model's weights
// depend only on its seed.
class Layers {
 public:
  Layers(Graph& graph, DType dtype, std::uint64_t seed) : g(graph), dtype_(dtype), seed_(seed), state_(seed) {}

  // conv (no bias, "same" padding) -> batchnorm -> activation, as torchvision's Conv2dNormActivation.
  Tensor conv_bn(Tensor x, const ConvSpec& spec, Activation act, const std::string& name);
  // A 1x1 conv with a bias and no batchnorm (EfficientNet's squeeze-and-excitation).
  Tensor conv_bias(Tensor x, std::int64_t filters, const std::string& name);
  // y = x W^T + b, as torch.nn.Linear, x [rows, inputs]; weight and bias named "<name>.weight", "<name>.bias",
  // or as given.
  Tensor linear(Tensor x, std::int64_t features, const std::string& name);
  Tensor linear(Tensor x, std::int64_t features, const std::string& weight, const std::string& bias,
                const std::string& name);
  // torch.nn.LayerNorm over the last axis: "<name>.weight" and "<name>.bias".
  Tensor layer_norm(Tensor x, float epsilon, const std::string& name);
  // Seeded values in [lo, hi), as a constant; `name` is the tensor's.
  Tensor random(const std::string& name, const Shape& shape, float lo, float hi);
  Tensor activate(Tensor x, Activation act, const std::string& name);
  // Training-mode dropout of `ratio` (x itself at 0) with its mask over x's leading `mask_dims`
  // (-1: every element; 1: whole samples, stochastic depth), each node's seed its own, all reading
  // one run counter made at the first call. The weights' stream is left alone, so a model's weights
  // do not depend on whether it is built for training.
  Tensor dropout(Tensor x, float ratio, std::int32_t mask_dims, const std::string& name);

  Graph& g;

 private:
  float next_uniform();

  DType dtype_;
  std::uint64_t seed_;
  std::uint64_t state_;
  std::uint64_t dropouts_ = 0;  // dropout nodes made so far
  std::optional<Tensor> step_;  // their run counter
};

}  // namespace porta::models::detail
