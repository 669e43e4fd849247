// Backward of the broadcasting arithmetic ops, the activations and Softmax, built from the forward
// ops themselves.
#include <string>

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

bool activation_needs_input(Activation a) { return a == Activation::Silu; }

Tensor activation_grad(Graph& g, Activation a, Tensor x, Tensor y, Tensor dy, const Node& node) {
  switch (a) {
    case Activation::None: return dy;
    case Activation::Sigmoid: return g.mul(dy, g.mul(y, one_minus(g, y)));  // s (1 - s)
    case Activation::Tanh: return g.mul(dy, one_minus(g, g.mul(y, y)));     // 1 - t^2
    case Activation::Silu: {                                                // s (1 + x (1 - s))
      const Tensor s = g.sigmoid(x);
      const Tensor one = filled(g, {1}, 1.0f, g.dtype(x));
      return g.mul(dy, g.mul(s, g.add(one, g.mul(x, one_minus(g, s)))));
    }
    case Activation::Relu:
    case Activation::Relu6:
    case Activation::Gelu: break;
  }
  throw Error(ErrorCode::Unsupported, "autodiff::gradients: " + std::string(to_string(node.op)) + " '" + node.name +
                                          "': the backward of " + std::string(to_string(a)) +
                                          " needs an activation-gradient op porta does not have yet");
}

Grads activation_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  Activation a = Activation::None;
  switch (node.op) {
    case OpKind::Relu: a = Activation::Relu; break;
    case OpKind::Clip: a = Activation::Relu6; break;  // a step at each bound, as relu's
    case OpKind::Sigmoid: a = Activation::Sigmoid; break;
    case OpKind::Silu: a = Activation::Silu; break;
    case OpKind::Tanh: a = Activation::Tanh; break;
    case OpKind::Gelu: a = Activation::Gelu; break;
    default:
      throw Error(ErrorCode::Internal, "activation_backward: " + std::string(to_string(node.op)) + " is no activation");
  }
  return {activation_grad(g, a, node.inputs[0], node.output, dy, node)};
}

// dx = y * (dy - sum(dy * y)) along the axis.
Grads softmax_backward(Graph& g, const Node& node, Tensor dy, const std::vector<bool>&) {
  const Tensor y = node.output;
  const auto axis = static_cast<std::size_t>(std::get<SoftmaxParams>(node.params).axis);
  const Tensor dot = sum_to(g, g.mul(dy, y), drop_axis(g.shape(y), axis));
  return {g.mul(y, g.sub(dy, dot))};
}

}  // namespace porta::autodiff::detail
