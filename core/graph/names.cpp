// Printable names of the public enums, and parsing where the CLI needs it.
#include <span>
#include <string>

#include "porta/device.hpp"
#include "porta/error.hpp"
#include "porta/executable.hpp"
#include "porta/ops.hpp"

namespace porta {

Error::~Error() = default;

std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::InvalidArgument: return "invalid argument";
    case ErrorCode::ShapeMismatch: return "shape mismatch";
    case ErrorCode::DTypeMismatch: return "dtype mismatch";
    case ErrorCode::Overflow: return "overflow";
    case ErrorCode::NotFound: return "not found";
    case ErrorCode::Unsupported: return "unsupported";
    case ErrorCode::DeviceUnavailable: return "device unavailable";
    case ErrorCode::OutOfMemory: return "out of memory";
    case ErrorCode::BuildFailed: return "build failed";
    case ErrorCode::IoError: return "i/o error";
    case ErrorCode::Internal: return "internal error";
  }
  return "?";
}

std::string_view to_string(DType t) noexcept {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i64: return "i64";
    case DType::i32: return "i32";
    case DType::boolean: return "bool";
  }
  return "?";
}

DType parse_dtype(std::string_view text) {
  for (const auto& dtypes : {std::span<const DType>(all_dtypes), std::span<const DType>(integer_dtypes)})
    for (DType t : dtypes)
      if (text == to_string(t)) return t;
  throw Error(ErrorCode::InvalidArgument,
              "unknown dtype '" + std::string(text) + "': expected f32, f16, bf16, i64, i32 or bool");
}

std::string_view to_string(OpKind op) noexcept {
  static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
  switch (op) {
    case OpKind::MatMul: return "matmul";
    case OpKind::Gemm: return "gemm";
    case OpKind::Conv2d: return "conv2d";
    case OpKind::Add: return "add";
    case OpKind::Sub: return "sub";
    case OpKind::Mul: return "mul";
    case OpKind::Div: return "div";
    case OpKind::Relu: return "relu";
    case OpKind::Clip: return "clip";
    case OpKind::Sigmoid: return "sigmoid";
    case OpKind::Silu: return "silu";
    case OpKind::Tanh: return "tanh";
    case OpKind::Gelu: return "gelu";
    case OpKind::BatchNorm: return "batchnorm";
    case OpKind::MaxPool2d: return "max_pool2d";
    case OpKind::AvgPool2d: return "avg_pool2d";
    case OpKind::GlobalAvgPool: return "global_avg_pool";
    case OpKind::Softmax: return "softmax";
    case OpKind::Reshape: return "reshape";
    case OpKind::Transpose: return "transpose";
    case OpKind::Concat: return "concat";
    case OpKind::Cast: return "cast";
    case OpKind::Erf: return "erf";
    case OpKind::Sqrt: return "sqrt";
    case OpKind::Reciprocal: return "reciprocal";
    case OpKind::HardSigmoid: return "hard_sigmoid";
    case OpKind::HardSwish: return "hard_swish";
    case OpKind::Pow: return "pow";
    case OpKind::Reduce: return "reduce";
    case OpKind::LayerNorm: return "layer_norm";
    case OpKind::RmsNorm: return "rms_norm";
    case OpKind::Slice: return "slice";
    case OpKind::Pad: return "pad";
    case OpKind::Expand: return "expand";
    case OpKind::Gather: return "gather";
    case OpKind::Compare: return "compare";
    case OpKind::Logical: return "logical";
    case OpKind::Where: return "where";
    case OpKind::ActivationBackward: return "activation_backward";
    case OpKind::MaxPool2dBackward: return "max_pool2d_backward";
    case OpKind::SoftmaxCrossEntropy: return "softmax_cross_entropy";
    case OpKind::SoftmaxCrossEntropyBackward: return "softmax_cross_entropy_backward";
    case OpKind::Attention: return "attention";
    case OpKind::Dropout: return "dropout";
    case OpKind::DepthwiseFilterGradient: return "depthwise_filter_gradient";
  }
  return "?";
}

std::string_view to_string(Comparison c) noexcept {
  switch (c) {
    case Comparison::Equal: return "equal";
    case Comparison::Less: return "less";
    case Comparison::LessOrEqual: return "less_or_equal";
    case Comparison::Greater: return "greater";
    case Comparison::GreaterOrEqual: return "greater_or_equal";
  }
  return "?";
}

std::string_view to_string(LogicalOp op) noexcept {
  switch (op) {
    case LogicalOp::Not: return "not";
    case LogicalOp::And: return "and";
    case LogicalOp::Or: return "or";
  }
  return "?";
}

std::string_view to_string(Activation a) noexcept {
  switch (a) {
    case Activation::None: return "none";
    case Activation::Relu: return "relu";
    case Activation::Relu6: return "relu6";
    case Activation::Sigmoid: return "sigmoid";
    case Activation::Silu: return "silu";
    case Activation::Tanh: return "tanh";
    case Activation::Gelu: return "gelu";
  }
  return "?";
}

std::string_view to_string(Reduction r) noexcept {
  switch (r) {
    case Reduction::Sum: return "sum";
    case Reduction::Mean: return "mean";
    case Reduction::Max: return "max";
    case Reduction::Min: return "min";
  }
  return "?";
}

std::string_view to_string(Layout layout) noexcept {
  switch (layout) {
    case Layout::NCHW: return "NCHW";
    case Layout::NHWC: return "NHWC";
  }
  return "?";
}

std::string_view to_string(PadMode mode) noexcept {
  switch (mode) {
    case PadMode::Constant: return "constant";
    case PadMode::Reflect: return "reflect";
    case PadMode::Edge: return "edge";
  }
  return "?";
}

std::string_view to_string(Impl impl) noexcept { return impl == Impl::Native ? "native" : "vendor"; }

std::string_view to_string(RunClock clock) noexcept {
  switch (clock) {
    case RunClock::Device: return "device-event";
    case RunClock::Host: return "host";
    case RunClock::None: break;
  }
  return "none";
}

}  // namespace porta
