#pragma once
// The op set and each op's parameters. Semantics follow ONNX / PyTorch.
#include <array>
#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

#include "porta/dtype.hpp"
#include "porta/tensor.hpp"

namespace porta {

enum class OpKind : std::uint8_t {
  MatMul,         // batched, numpy-broadcast batch dims, optional transposes of the last two dims
  Gemm,           // act(alpha * op(A) op(B) + beta * C), C broadcast to [M, N]
  Conv2d,         // NCHW or NHWC input, [K, C/groups, R, S] weights, optional [K] bias and residual, fused activation
  Add, Sub, Mul, Div,  // numpy broadcasting
  Relu, Clip, Sigmoid, Silu, Tanh, Gelu,
  BatchNorm,      // inference: scale * (x - mean) / sqrt(var + eps) + bias over channel dim 1
  MaxPool2d, AvgPool2d, GlobalAvgPool,
  Softmax,
  Reshape,        // also flatten
  Transpose,
  Concat,
  Cast,
  // Elementwise math; Pow broadcasts as Add does.
  Erf, Sqrt, Reciprocal, HardSigmoid, HardSwish, Pow,
  Reduce,         // sum, mean, max or min over a set of axes
  LayerNorm,      // (x - mean) / sqrt(variance + epsilon) * scale + bias over the axes from `axis` on
  RmsNorm,        // x / sqrt(mean(x^2) + epsilon) * scale over the axes from `axis` on
  Slice,          // ONNX Slice: starts, ends, axes and steps (negative steps reverse)
  Pad,            // constant, reflect or edge padding of any dims (negative pads crop)
  Expand,         // numpy broadcast of x to a shape
  // Indexing and masks: data of any dtype, integer indices, bool results and conditions.
  Gather,         // ONNX Gather: y = data indexed along `axis` by an i64 or i32 tensor (negative indices wrap)
  Compare,        // equal, less, less_or_equal, greater, greater_or_equal; numpy broadcasting, bool result
  Logical,        // not, and, or of bool tensors; and/or broadcast
  Where,          // where(cond, x, y): x where the bool cond holds, else y; all three broadcast
  // Backward ops (docs/training.md): what the gradient of a forward op needs that no composition of
  // forward ops computes.
  ActivationBackward,  // dy * f'(x) for the forward activation its params name; inputs x, dy
  MaxPool2dBackward,   // dy routed to each window's first maximum of x; inputs x, dy; dx has x's shape
  SoftmaxCrossEntropy, // per row of the last axis: logsumexp(z) sum(l) - sum(l z); inputs logits z, labels l
                       // (float, z's shape), or logsumexp(z) - z[label] for i64/i32 class indices, one per row
  Attention,      // softmax(scale * q kᵀ + mask, causal) v over [batch, heads, seq, head_dim]
  Dropout,        // x * mask / (1 - ratio), the mask drawn from (seed, step, element); inputs x, step
  // Backward ops added later, here at the end so that the ops before them keep their numbers.
  DepthwiseFilterGradient,  // depthwise conv2d's dw [C, 1, R, S] from x and dy; inputs x, dy
  SoftmaxCrossEntropyBackward,  // dy (softmax(z) - one_hot(label)) per row; inputs z, i64/i32 labels, dy
};

inline constexpr int op_kind_count = static_cast<int>(OpKind::SoftmaxCrossEntropyBackward) + 1;

std::string_view to_string(OpKind op) noexcept;

// Where the channels of a 4-D activation sit: NCHW (ONNX, PyTorch) or NHWC (channels last). Conv2d
// and the pools take either; the compiler's layout pass moves chains of them into the layout the
// device prefers and converts only at the chain's ends.
enum class Layout : std::uint8_t { NCHW, NHWC };

std::string_view to_string(Layout layout) noexcept;

// Activation fused into Gemm and Conv2d epilogues.
enum class Activation : std::uint8_t { None, Relu, Relu6, Sigmoid, Silu, Tanh, Gelu };

std::string_view to_string(Activation a) noexcept;

struct MatMulParams {
  bool trans_a = false;
  bool trans_b = false;
};

struct GemmParams {
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.0f;
  float beta = 1.0f;
  Activation activation = Activation::None;
};

struct Conv2dParams {
  std::array<std::int64_t, 2> stride{1, 1};       // h, w
  std::array<std::int64_t, 4> pad{0, 0, 0, 0};    // top, left, bottom, right (ONNX order)
  std::array<std::int64_t, 2> dilation{1, 1};     // h, w
  std::int64_t groups = 1;
  Activation activation = Activation::None;
  // Set by the builder when a residual is given: y = activation(conv + bias + residual), the
  // residual being the last input. Lets a ResNet block's add and relu ride in the conv's epilogue.
  bool residual = false;
  Layout layout = Layout::NCHW;  // of x, residual and y; the weights are [K, C/groups, R, S] in both
};

struct ClipParams {
  float min = 0.0f;
  float max = 6.0f;
};

struct GeluParams {
  bool tanh_approximation = false;  // false: exact erf form, as ONNX Gelu and torch's default
};

struct BatchNormParams {
  float epsilon = 1e-5f;
};

struct Pool2dParams {
  std::array<std::int64_t, 2> kernel{1, 1};
  std::array<std::int64_t, 2> stride{1, 1};
  std::array<std::int64_t, 4> pad{0, 0, 0, 0};    // top, left, bottom, right
  std::array<std::int64_t, 2> dilation{1, 1};
  bool ceil_mode = false;
  bool count_include_pad = false;                 // average pooling only
  Layout layout = Layout::NCHW;
};

struct GlobalPoolParams {
  Layout layout = Layout::NCHW;
};

struct SoftmaxParams {
  std::int64_t axis = -1;
};

struct ReshapeParams {
  Shape shape;  // resolved: no -1 or 0 entries remain after the builder
};

struct TransposeParams {
  std::vector<std::int64_t> perm;
};

struct ConcatParams {
  std::int64_t axis = 0;  // normalised to be non-negative
};

struct CastParams {
  DType to = DType::f32;
};

struct HardSigmoidParams {  // max(0, min(1, alpha * x + beta)), as ONNX HardSigmoid
  float alpha = 0.2f;
  float beta = 0.5f;
};

struct NormParams {
  std::int64_t axis = -1;  // the first normalised axis; the builder makes it non-negative
  float epsilon = 1e-5f;
};

enum class Reduction : std::uint8_t { Sum, Mean, Max, Min };

std::string_view to_string(Reduction r) noexcept;

struct ReduceParams {
  Reduction op = Reduction::Sum;
  // Negative axes count from the end; empty means every axis. The builder stores them normalised:
  // non-negative, ascending, never empty.
  std::vector<std::int64_t> axes;
  bool keepdims = true;  // reduced axes stay as 1s; without, they go (all of them: the result is [1])
};

// As ONNX defines them: starts and ends index `axes` (every axis, in order, when empty); negative
// values count from the end and both are clamped to the axis, so INT64_MAX means "to the end".
// steps default to 1; a negative step walks backwards from start. The builder normalises the axes.
struct SliceParams {
  std::vector<std::int64_t> starts, ends, axes, steps;
};

enum class PadMode : std::uint8_t { Constant, Reflect, Edge };

std::string_view to_string(PadMode mode) noexcept;

struct PadParams {
  // ONNX order: the begin pads of every dimension, then the end pads; a negative pad crops.
  std::vector<std::int64_t> pads;
  PadMode mode = PadMode::Constant;
  float value = 0.0f;  // Constant mode; stored in the tensor's dtype
};

struct ExpandParams {
  Shape shape;  // resolved: the broadcast of the input's shape with the requested one
};

struct GatherParams {
  std::int64_t axis = 0;  // normalised to be non-negative
};

enum class Comparison : std::uint8_t { Equal, Less, LessOrEqual, Greater, GreaterOrEqual };

std::string_view to_string(Comparison c) noexcept;

struct CompareParams {
  Comparison op = Comparison::Equal;
};

enum class LogicalOp : std::uint8_t { Not, And, Or };

std::string_view to_string(LogicalOp op) noexcept;

struct LogicalParams {
  LogicalOp op = LogicalOp::Not;
};

// The derivative ActivationBackward applies: that of `activation` (Relu, Clip, Gelu, HardSigmoid or
// HardSwish) under the forward op's own parameters.
struct ActivationBackwardParams {
  OpKind activation = OpKind::Relu;
  ClipParams clip{};                // Clip: zero outside (min, max), as PyTorch's hardtanh
  GeluParams gelu{};                // Gelu: the exact or the tanh form
  HardSigmoidParams hard_sigmoid{}; // HardSigmoid; HardSwish uses alpha 1/6, beta 1/2
};

// Scaled dot-product attention, as torch's scaled_dot_product_attention: q [b, h, sq, d], k [b, h, sk, d],
// v [b, h, sk, dv], an optional additive mask broadcast to [b, h, sq, sk]; y [b, h, sq, dv].
struct AttentionParams {
  float scale = 0.0f;   // 0: 1 / sqrt(d); the builder stores the value it resolves to
  bool causal = false;  // query i sees keys 0..i only (the mask's top-left alignment when sq != sk)
};

// Dropout in training mode: element i is kept, scaled by 1 / (1 - ratio), where the Philox-4x32 bits
// of (seed, step, i) say so (backends/common/philox.h), so every device draws the same mask. The step
// is a tensor, so that each run of one executable can draw a new mask (docs/training.md).
// mask_dims k draws the mask over x's leading k dims only, one draw shared by all the elements at
// each of their indices: k = 1 drops or keeps whole samples, stochastic depth on a residual branch
// (torchvision's StochasticDepth, mode "row"); -1, the default, draws one per element.
// batch_offset b: x holds samples b, b + 1, ... (dim 0) of a larger batch, and draws the mask that
// batch draws for them, so that the shards of a data-parallel step together drop what one process
// training the whole batch drops (autodiff::TrainingOptions::batch_offset).
struct DropoutParams {
  float ratio = 0.5f;       // the probability of dropping an element, in [0, 1)
  std::uint64_t seed = 0;
  std::int32_t mask_dims = -1;  // -1 (every dim) or 0 .. rank(x)
  std::int64_t batch_offset = 0;  // >= 0
};

using OpParams = std::variant<std::monostate, MatMulParams, GemmParams, Conv2dParams, ClipParams,
                              GeluParams, BatchNormParams, Pool2dParams, GlobalPoolParams,
                              SoftmaxParams, ReshapeParams, TransposeParams, ConcatParams, CastParams,
                              HardSigmoidParams, ReduceParams, NormParams, SliceParams, PadParams,
                              ExpandParams, GatherParams, CompareParams, LogicalParams,
                              ActivationBackwardParams, AttentionParams, DropoutParams>;

// Conv and pooling output extent along one spatial dimension (floor or ceil), before checking.
constexpr std::int64_t window_output_size(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                                          std::int64_t pad_begin, std::int64_t pad_end,
                                          std::int64_t dilation, bool ceil_mode = false) {
  const std::int64_t span = dilation * (kernel - 1) + 1;
  const std::int64_t room = in + pad_begin + pad_end - span;
  if (room < 0) return 0;
  std::int64_t out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  // ONNX / PyTorch: with ceil_mode the last window must start inside the input or left padding.
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

// The input coordinate that output coordinate `i - begin` of a pad reads along a dimension of
// `dim` elements, or -1 where a constant pad writes its value. Reflect mirrors about the edge
// element (the builder keeps its pads below `dim`); edge repeats it.
constexpr std::int64_t pad_source(std::int64_t i, std::int64_t dim, PadMode mode) {
  if (i >= 0 && i < dim) return i;
  if (mode == PadMode::Constant) return -1;
  if (mode == PadMode::Edge) return i < 0 ? 0 : dim - 1;
  return i < 0 ? -i : 2 * (dim - 1) - i;
}

}  // namespace porta
