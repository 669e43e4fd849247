#include <variant>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

void opencl_binary(LaunchBuilder& b, const Node& node) {
  const Tensor a = node.inputs[0], bt = node.inputs[1];
  const Shape& y_shape = b.desc(node.output).shape;
  const auto operand_strides = [&](const Shape& shape) { return broadcast_strides(shape, y_shape); };
  // The kernel's OPERAND_* modes: as many elements as the result means the same layout.
  const std::int64_t n = b.desc(node.output).numel();
  const auto mode = [&](Tensor t) -> std::int32_t { return b.desc(t).numel() == n ? 0 : b.desc(t).numel() == 1 ? 1 : 2; };
  // BINARY_* of kernels/elementwise.cl: add, sub, mul, div in OpKind order, then pow.
  const std::int32_t op =
      node.op == OpKind::Pow ? 4 : static_cast<std::int32_t>(node.op) - static_cast<std::int32_t>(OpKind::Add);
  auto args = b.kernel("elementwise", "binary", b.desc(node.output).dtype);
  args.tensor(a).tensor(bt).tensor(node.output).i64(n).i32(op).i32(mode(a)).i32(mode(bt))
      .long8(to_long8(y_shape, 1)).long8(operand_strides(b.desc(a).shape)).long8(operand_strides(b.desc(bt).shape));
  b.enqueue_1d(std::move(args), b.desc(node.output).numel());
}

void opencl_unary(LaunchBuilder& b, const Node& node) {
  std::int32_t act = 0;
  float lo = 0.0f, hi = 0.0f;
  static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
  switch (node.op) {
    case OpKind::Relu: act = activation_code(Activation::Relu); break;
    case OpKind::Sigmoid: act = activation_code(Activation::Sigmoid); break;
    case OpKind::Silu: act = activation_code(Activation::Silu); break;
    case OpKind::Tanh: act = activation_code(Activation::Tanh); break;
    case OpKind::Gelu:
      act = std::get<GeluParams>(node.params).tanh_approximation ? static_cast<std::int32_t>(ClActivation::GeluTanh)
                                                                  : activation_code(Activation::Gelu);
      break;
    case OpKind::Erf: act = static_cast<std::int32_t>(ClActivation::Erf); break;
    case OpKind::Sqrt: act = static_cast<std::int32_t>(ClActivation::Sqrt); break;
    case OpKind::Reciprocal: act = static_cast<std::int32_t>(ClActivation::Reciprocal); break;
    case OpKind::HardSwish: act = static_cast<std::int32_t>(ClActivation::HardSwish); break;
    case OpKind::HardSigmoid: {  // alpha and beta ride in lo and hi
      const auto& p = std::get<HardSigmoidParams>(node.params);
      act = static_cast<std::int32_t>(ClActivation::HardSigmoid);
      lo = p.alpha;
      hi = p.beta;
      break;
    }
    default: {  // Clip
      const auto& p = std::get<ClipParams>(node.params);
      act = static_cast<std::int32_t>(ClActivation::Clip);
      lo = p.min;
      hi = p.max;
    }
  }
  const std::int64_t n = b.desc(node.output).numel();
  auto args = b.kernel("elementwise", "unary", b.desc(node.output).dtype);
  args.tensor(node.inputs[0]).tensor(node.output).i64(n).i32(act).f32(lo).f32(hi);
  b.enqueue_1d(std::move(args), n);
}

void opencl_cast(LaunchBuilder& b, const Node& node) {
  const DType from = b.desc(node.inputs[0]).dtype, to = b.desc(node.output).dtype;
  const bool exact = !is_float(from) && !is_float(to);  // between integer dtypes: no float in between
  const std::string kernel = std::string(exact ? "cast_exact_from_" : "cast_from_") + std::string(to_string(from));
  const std::int64_t n = b.desc(node.output).numel();
  auto args = b.kernel("elementwise", kernel, to);
  args.tensor(node.inputs[0]).tensor(node.output).i64(n);
  b.enqueue_1d(std::move(args), n);
}

}  // namespace porta::detail
