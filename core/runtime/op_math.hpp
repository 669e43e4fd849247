#pragma once
// Op semantics shared by every host kernel (ref and cpu): scalar activations, numpy broadcasting
// and the dimension bookkeeping of matmul and conv. Templates, so the ref oracle runs them in
// double and the cpu backend in float.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/runtime/backward_math.h"
#include "core/runtime/logic_math.hpp"
#include "porta/graph.hpp"

namespace porta::detail {

template <class T> T sigmoid(T x) { return T(1) / (T(1) + std::exp(-x)); }
template <class T> T silu(T x) { return x * sigmoid(x); }
template <class T> T gelu(T x, bool tanh_approximation) {
  if (tanh_approximation) {
    const T c = std::sqrt(T(2) / std::numbers::pi_v<T>);
    return T(0.5) * x * (T(1) + std::tanh(c * (x + T(0.044715) * x * x * x)));
  }
  return T(0.5) * x * (T(1) + std::erf(x / std::numbers::sqrt2_v<T>));
}
template <class T> T clip(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); }
template <class T> T hard_sigmoid(T x, T alpha, T beta) { return clip(alpha * x + beta, T(0), T(1)); }
template <class T> T hard_swish(T x) { return x * hard_sigmoid(x, T(1) / T(6), T(0.5)); }

template <class T> T activate(Activation a, T x) {
  switch (a) {
    case Activation::None: return x;
    case Activation::Relu: return x > T(0) ? x : T(0);
    case Activation::Relu6: return clip(x, T(0), T(6));
    case Activation::Sigmoid: return sigmoid(x);
    case Activation::Silu: return silu(x);
    case Activation::Tanh: return std::tanh(x);
    case Activation::Gelu: return gelu(x, false);
  }
  return x;
}

// An ActivationBackward node's forward activation as activation_derivative (core/runtime/backward_math.h)
// takes it.
ActivationGradient activation_gradient(const ActivationBackwardParams& p);

// Maps a linear index of a broadcast result to the linear index of one operand.
class BroadcastIndex {
 public:
  BroadcastIndex(const Shape& operand, const Shape& result);
  std::int64_t operator()(std::int64_t result_index) const;
  bool identity() const noexcept { return identity_; }  // operand has the result's shape

 private:
  Shape result_;
  std::vector<std::int64_t> operand_strides_;  // 0 along broadcast dimensions
  bool identity_ = false;
};

// numpy broadcasting of two shapes; returns false when they are incompatible.
bool broadcast_shapes(const Shape& a, const Shape& b, Shape& result);

// Tiles of `y` needed to cover `x` (x >= 0, y > 0), and `x` rounded up to a multiple of `y`.
constexpr std::int64_t ceil_div(std::int64_t x, std::int64_t y) { return (x + y - 1) / y; }
constexpr std::int64_t round_up(std::int64_t x, std::int64_t y) { return ceil_div(x, y) * y; }

// Batched matmul with broadcast batch dims: C[batch] = op(A[batch]) op(B[batch]).
struct MatMulDims {
  std::int64_t m = 0, n = 0, k = 0;
  Shape batch;                                 // broadcast batch shape of the result
  std::int64_t batch_count = 1;
  // Element offsets of each batch's A, B and C matrices, in batch order.
  std::vector<std::int64_t> a_offset, b_offset, c_offset;
};
MatMulDims matmul_dims(const Shape& a, const Shape& b, const MatMulParams& p);
// The problem in a few words, as plans are reported (core/runtime/plan_log.hpp): "gemm 64x128x256",
// with " batch 12" where there are several.
std::string describe(const MatMulDims& d);

// The four extents of an activation in `layout`: [N, C, H, W] or [N, H, W, C].
Shape activation_shape(Layout layout, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w);

// Linear index of element (n, c, h, w) of an activation [N, C, H, W] stored in `layout`.
struct ActivationIndex {
  std::int64_t c, h, w;
  bool nhwc;
  std::int64_t operator()(std::int64_t n_, std::int64_t c_, std::int64_t h_, std::int64_t w_) const {
    return nhwc ? ((n_ * h + h_) * w + w_) * c + c_ : ((n_ * c + c_) * h + h_) * w + w_;
  }
};

// Conv2d dimensions from the input (NCHW or NHWC) and KCRS weights.
struct ConvDims {
  std::int64_t n, c, h, w;     // input
  std::int64_t k, r, s;        // weights: K filters of C/groups x R x S
  std::int64_t p, q;           // output height and width
  std::int64_t groups, c_per_group, k_per_group;
  Layout layout;

  ActivationIndex x_index() const { return {c, h, w, layout == Layout::NHWC}; }
  ActivationIndex y_index() const { return {k, p, q, layout == Layout::NHWC}; }
};
ConvDims conv_dims(const Shape& x, const Shape& w, const Conv2dParams& p);
// depthwise_filter_gradient's: x's and dy's, with R x S the most taps that give dy's P x Q (a tap
// count below 1 where dy is too large for x).
ConvDims depthwise_gradient_dims(const Shape& x, const Shape& dy, const Conv2dParams& p);
// The layer in a few words: "conv 8x64x56x56 k256 1x1 s1 g1" (N x C x H x W, filters, their size,
// stride and groups).
std::string describe(const ConvDims& d, const Conv2dParams& p);

// Conv2d inputs are {x, w, bias?, residual?}: the slots of the optional ones, or -1.
struct ConvSlots {
  int bias = -1, residual = -1;
};
ConvSlots conv_slots(const Node& node);

// Pooling dimensions from the input (NCHW or NHWC).
struct PoolDims {
  std::int64_t n, c, h, w, p, q;
  Layout layout;

  ActivationIndex x_index() const { return {c, h, w, layout == Layout::NHWC}; }
  ActivationIndex y_index() const { return {c, p, q, layout == Layout::NHWC}; }
};
PoolDims pool_dims(const Shape& x, const Pool2dParams& p);
// A global pool's: the output is 1 x 1.
PoolDims global_pool_dims(const Shape& x, const GlobalPoolParams& p);

// The layout of a Conv2d, pooling or global pooling node; NCHW for every other op, which either
// has no layout or (elementwise ops) runs in whatever layout its operands have.
Layout node_layout(const Node& node);
// For a backend whose kernels read NCHW only: why it refuses `node`, or empty.
std::string nchw_only_reason(const Node& node, std::string_view backend);
// For a backend whose kernels hold float tensors only: why it refuses `node` (an integer or bool
// operand or result; the ops that only move elements, Cast, the comparisons, the logical ops and
// Where hold every dtype, and the cross-entropy ops take i64/i32 class labels), or empty.
std::string float_only_reason(const Graph& graph, const Node& node, std::string_view backend);

// Gather: the coordinate along the gathered axis of `extent` that `index` names (a negative one
// counts from the end); throws InvalidArgument naming the node for one out of range.
std::int64_t gather_coordinate(std::int64_t index, std::int64_t extent, const Node& node);

// SoftmaxCrossEntropy and SoftmaxCrossEntropyBackward with i64/i32 labels: `label` itself, checked to
// be a class in [0, classes); throws InvalidArgument naming the node, the label and the range for one
// outside it. Unlike gather's indices, a negative label does not count from the end: an "ignore" label
// such as -100 must not silently become a class.
std::int64_t label_coordinate(std::int64_t label, std::int64_t classes, const Node& node);
// Whether `node` reads integer class labels (its operand 1): a cross-entropy node whose labels are i64/i32.
bool reads_class_labels(const Graph& graph, const Node& node);

// The axis split softmax and concat use: outer x axis x inner.
struct AxisSplit {
  std::int64_t outer = 1, axis = 1, inner = 1;
};
AxisSplit split_at_axis(const Shape& shape, std::int64_t axis);

// Layer and RMS normalisation's rows: outer rows of `axis` elements (the axes from `axis` on), inner 1.
AxisSplit norm_rows(const Shape& shape, std::int64_t axis);

// A reduction's input dimensions in two groups, each with its strides in the input: the kept ones
// (which index the output, in order) and the reduced ones. Neighbouring dimensions of one group are
// merged, so reducing the trailing axes leaves one reduced run of stride 1.
struct ReduceSplit {
  Shape kept_extent, kept_stride;
  Shape reduced_extent, reduced_stride;
  std::int64_t kept_count = 1, reduced_count = 1;

  // Offset in the input of element `i` of a group.
  std::int64_t kept_offset(std::int64_t i) const { return offset_of(i, kept_extent, kept_stride); }
  std::int64_t reduced_offset(std::int64_t i) const { return offset_of(i, reduced_extent, reduced_stride); }

 private:
  static std::int64_t offset_of(std::int64_t i, const Shape& extent, const Shape& stride) {
    std::int64_t offset = 0;
    for (std::size_t d = extent.size(); d-- > 0;) {
      offset += i % extent[d] * stride[d];
      i /= extent[d];
    }
    return offset;
  }
};
// `axes` normalised, as ReduceParams holds them.
ReduceSplit reduce_split(const Shape& x, const std::vector<std::int64_t>& axes);
// What a slice takes along one dimension of its input: `length` elements from `start`, `step` apart.
struct SliceDim {
  std::int64_t start = 0, step = 1, length = 0;
};
// Every dimension of x, with ONNX's clamping; the axes are the builder's (non-negative). A length
// may come out 0 or less, which the builder refuses.
std::vector<SliceDim> slice_dims(const Shape& x, const SliceParams& p);

// Element (i_0, ..., i_k) of a Transpose, Slice or Expand result is x[offset + sum i_d * stride[d]]:
// one gather serves all three, with negative strides along a reversed slice and 0 along a broadcast.
struct StridedView {
  Shape extent;  // the result's shape
  Shape stride;
  std::int64_t offset = 0;
};
StridedView strided_view(const Node& node, const Shape& x);

// An attention node's sizes: batch x heads problems, each `queries` rows of q [queries, depth] against
// k [keys, depth] and v [keys, width]; the additive mask, if any, broadcast with stride 0.
struct AttentionDims {
  std::int64_t batch = 1, heads = 1, queries = 0, keys = 0, depth = 0, width = 0;
  float scale = 1.0f;
  bool causal = false;
  bool mask = false;
  std::int64_t mask_stride[4] = {};  // along batch, heads, queries, keys

  std::int64_t problems() const { return batch * heads; }
  // The mask's offset of problem `bh`'s row `i`; its key j adds j * mask_stride[3].
  std::int64_t mask_row(std::int64_t bh, std::int64_t i) const {
    return bh / heads * mask_stride[0] + bh % heads * mask_stride[1] + i * mask_stride[2];
  }
  // The keys that query row i sees: the first i + 1 when causal, else all.
  std::int64_t visible_keys(std::int64_t i) const { return causal ? std::min(keys, i + 1) : keys; }
};
// `mask` is null when the node has none.
AttentionDims attention_dims(const AttentionParams& p, const Shape& q, const Shape& v, const Shape* mask);

}  // namespace porta::detail
