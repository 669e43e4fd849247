#pragma once
// Backward rules: given a forward node and the gradient dy of its output, each appends the nodes
// computing the gradients of the node's inputs. One file per family: rules_linear.cpp (MatMul,
// Gemm), rules_elementwise.cpp (arithmetic, activations, Softmax), rules_layout.cpp (Reshape,
// Transpose, Concat, Cast, GlobalAvgPool), rules_batchnorm.cpp.
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

// Whether activation_grad needs the activation's input x (else its output y is enough).
bool activation_needs_input(Activation a);
// dy * f'(x) for a fused or standalone activation f, given its input x and output y. Throws
// Unsupported for activations whose derivative needs an op porta lacks.
Tensor activation_grad(Graph& g, Activation a, Tensor x, Tensor y, Tensor dy, const Node& node);

}  // namespace porta::autodiff::detail
