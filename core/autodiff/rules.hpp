#pragma once
// Backward rules: given a forward node and the gradient dy of its output, each appends the nodes
// computing the gradients of the node's inputs. One file per family: rules_linear.cpp (MatMul,
// Gemm), rules_elementwise.cpp (arithmetic, activations, Softmax, SoftmaxCrossEntropy, Dropout),
// rules_layout.cpp (Reshape, Transpose, Concat, Cast, GlobalAvgPool), rules_batchnorm.cpp,
// rules_conv_pool.cpp (Conv2d, MaxPool2d, AvgPool2d), rules_math.cpp (Erf, Sqrt, Reciprocal, Pow,
// LayerNorm, Slice, Pad, Expand, Gather), rules_attention.cpp (Attention).
#include <vector>

#include "porta/graph.hpp"

namespace porta::autodiff::detail {

// `needs[i]`: whether input i wants a gradient; the result holds one per input, an empty handle
// where none was wanted.
using Grads = std::vector<Tensor>;
using Rule = Grads (*)(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);

// The rule for `op`, or nullptr where there is none yet.
Rule backward_rule(OpKind op);

Grads matmul_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads gemm_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads add_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads sub_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads mul_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads div_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads activation_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads softmax_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads reshape_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads transpose_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads concat_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads cast_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads global_avg_pool_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads reduce_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads batchnorm_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads softmax_cross_entropy_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads dropout_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
// rules_conv_pool.cpp
Grads conv2d_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads max_pool_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads avg_pool_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
// rules_math.cpp
Grads erf_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads sqrt_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads reciprocal_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads pow_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads layer_norm_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads slice_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads pad_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads expand_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
Grads gather_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);
// rules_attention.cpp
Grads attention_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs);

// The transposed convolution of dy (conv2d's output layout, p.layout) with the conv's filters w:
// conv2d's data gradient for an input of h x w pixels (conv_backward.cpp). The pooling rules use it
// too, where dy's extent follows the pool's ceil_mode rather than the conv's.
Tensor transposed_conv(Graph& g, Tensor dy, Tensor w, const Conv2dParams& p, std::int64_t h, std::int64_t w_extent);

// Whether activation_grad needs the activation's input x (else its output y is enough).
bool activation_needs_input(Activation a);
// dy * f'(x) for a fused or standalone activation f, given its input x (where
// activation_needs_input says it is needed) and its output y.
Tensor activation_grad(Graph& g, Activation a, Tensor x, Tensor y, Tensor dy, const Node& node);

}  // namespace porta::autodiff::detail
