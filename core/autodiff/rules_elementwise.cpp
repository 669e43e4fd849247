// Backward of the broadcasting arithmetic ops, the activations and Softmax, built from the forward
// ops themselves.
#include <string>
#include <variant>

#include "core/autodiff/graph_math.hpp"
#include "core/autodiff/rules.hpp"
#include "porta/error.hpp"

namespace porta::autodiff::detail {
namespace {

Tensor sum_like(Graph& g, Tensor grad, Tensor operand) { return sum_to(g, grad, g.shape(operand)); }

Tensor one_minus(Graph& g, Tensor x) { return g.sub(filled(g, {1}, 1.0f, g.dtype(x)), x); }

}  // namespace

Grads add_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  Grads dx(2);
  for (std::size_t i = 0; i < 2; ++i)
    if (needs[i]) dx[i] = sum_like(g, dy, node.inputs[i]);
  return dx;
}

Grads sub_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  Grads dx(2);
  if (needs[0]) dx[0] = sum_like(g, dy, node.inputs[0]);
  if (needs[1]) dx[1] = scaled(g, sum_like(g, dy, node.inputs[1]), -1.0f);
  return dx;
}

Grads mul_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  const Tensor a = node.inputs[0], b = node.inputs[1];
  Grads dx(2);
  if (needs[0]) dx[0] = sum_like(g, g.mul(dy, b), a);
  if (needs[1]) dx[1] = sum_like(g, g.mul(dy, a), b);
  return dx;
}

Grads div_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  const Tensor a = node.inputs[0], b = node.inputs[1];
  Grads dx(2);
  if (needs[0]) dx[0] = sum_like(g, g.div(dy, b), a);
  // d(a / b) / db = -(a / b) / b = -y / b
  if (needs[1]) dx[1] = scaled(g, sum_like(g, g.div(g.mul(dy, node.output), b), b), -1.0f);
  return dx;
}

bool activation_needs_input(Activation a) { return a == Activation::Silu || a == Activation::Gelu; }

Tensor activation_grad(Graph& g, Activation a, Tensor x, Tensor y, Tensor dy, const Node&) {
  switch (a) {
    case Activation::None: return dy;
    case Activation::Sigmoid: return g.mul(dy, g.mul(y, one_minus(g, y)));  // s (1 - s)
    case Activation::Tanh: return g.mul(dy, one_minus(g, g.mul(y, y)));     // 1 - t^2
    case Activation::Silu: {                                                // s (1 + x (1 - s))
      const Tensor s = g.sigmoid(x);
      const Tensor one = filled(g, {1}, 1.0f, g.dtype(x));
      return g.mul(dy, g.mul(s, g.add(one, g.mul(x, one_minus(g, s)))));
    }
    // relu and relu6 pass dy where their output is strictly inside (0, inf) or (0, 6), which is
    // where their input is: y serves as well as x.
    case Activation::Relu: return g.activation_backward(y, dy, {.activation = OpKind::Relu});
    case Activation::Relu6: return g.activation_backward(y, dy, {.activation = OpKind::Clip, .clip = {0.0f, 6.0f}});
    case Activation::Gelu: return g.activation_backward(x, dy, {.activation = OpKind::Gelu});
  }
  throw Error(ErrorCode::Internal, "activation_grad: activation " + std::to_string(static_cast<int>(a)));
}

// Relu and clip read their output, as the fused activations do, so that a conv or gemm before them
// may still fuse them (its own output is then never stored).
Grads activation_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  const Tensor x = node.inputs[0];
  ActivationBackwardParams p{.activation = node.op};
  switch (node.op) {
    case OpKind::Sigmoid: return {activation_grad(g, Activation::Sigmoid, x, node.output, dy, node)};
    case OpKind::Silu: return {activation_grad(g, Activation::Silu, x, node.output, dy, node)};
    case OpKind::Tanh: return {activation_grad(g, Activation::Tanh, x, node.output, dy, node)};
    case OpKind::Relu: return {g.activation_backward(node.output, dy, p)};
    case OpKind::Clip:
      p.clip = std::get<ClipParams>(node.params);
      return {g.activation_backward(node.output, dy, p)};
    case OpKind::HardSwish: break;
    case OpKind::Gelu: p.gelu = std::get<GeluParams>(node.params); break;
    case OpKind::HardSigmoid: p.hard_sigmoid = std::get<HardSigmoidParams>(node.params); break;
    default:
      throw Error(ErrorCode::Internal, "activation_backward: " + std::string(to_string(node.op)) + " is no activation");
  }
  return {g.activation_backward(x, dy, p)};
}

// The gradient of softmax cross-entropy per row with respect to the logits: dy (softmax(z) sum(l) - l).
// Integer class labels (which carry no gradient) take the fused op, dy (softmax(z) - one_hot(l)),
// with no one-hot tensor made. The labels' own gradient, -dy log softmax(z), needs a log op porta
// does not have.
Grads softmax_cross_entropy_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  const Tensor z = node.inputs[0], l = node.inputs[1];
  if (!is_float(g.dtype(l))) return {g.softmax_cross_entropy_backward(z, l, dy), {}};
  if (needs[1])
    throw Error(ErrorCode::Unsupported, "autodiff::gradients: softmax_cross_entropy '" + node.name +
                                            "': the gradient with respect to the labels needs a log op porta lacks");
  Shape row = g.shape(z);
  row.back() = 1;
  const Tensor total = sum_to(g, l, row);  // 1 for one-hot labels
  return {g.mul(g.reshape(dy, row), g.sub(g.mul(g.softmax(z, -1), total), l)), {}};
}

// dx = y * (dy - sum(dy * y)) along the axis.
Grads softmax_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  const Tensor y = node.output;
  const auto axis = static_cast<std::size_t>(std::get<SoftmaxParams>(node.params).axis);
  const Tensor dot = sum_to(g, g.mul(dy, y), drop_axis(g.shape(y), axis));
  return {g.mul(y, g.sub(dy, dot))};
}

// The mask is a function of (seed, step, element), so dropout of dy under the node's parameters and
// step multiplies by the forward's own mask and scale, recomputed rather than stored. The step is a
// counter: no gradient.
Grads dropout_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>& needs) {
  Grads dx(2);
  if (needs[0]) dx[0] = g.dropout(dy, node.inputs[1], std::get<DropoutParams>(node.params));
  return dx;
}

}  // namespace porta::autodiff::detail
