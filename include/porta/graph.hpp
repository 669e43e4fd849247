#pragma once
// The op graph. Every builder call infers the result's shape and dtype at once and throws
// porta::Error naming the node, the op and the offending values, so a Graph is always valid.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "porta/ops.hpp"
#include "porta/tensor.hpp"

namespace porta {

struct Node {
  std::string name;
  OpKind op;
  OpParams params;
  std::vector<Tensor> inputs;  // optional inputs that were not given are left out
  Tensor output;
};

struct TensorInfo {
  std::string name;
  TensorDesc desc;
  Role role = Role::Intermediate;
  std::int32_t producer = -1;                         // node index, or -1 for inputs and constants
  Shape input_strides;                                // inputs: element strides of the caller's buffer
  std::shared_ptr<const std::vector<std::byte>> data; // constants: dense storage-dtype bytes
};

class Graph {
 public:
  // --- tensors from outside ---------------------------------------------------------------
  // A graph input. `strides` (in elements) lets the caller's buffer be a strided view, e.g. a
  // transposed or sliced array; empty means dense row-major.
  Tensor input(std::string name, Shape shape, DType dtype = DType::f32, Shape strides = {});
  // A constant (weights). Values are converted to `dtype` once, here.
  Tensor constant(std::string name, Shape shape, std::span<const float> values,
                  DType dtype = DType::f32);
  // A constant from bytes already in `dtype` storage.
  Tensor constant_bytes(std::string name, Shape shape, DType dtype, std::span<const std::byte> bytes);
  // A constant that shares storage already in `dtype`, e.g. with another graph: no copy is made.
  Tensor constant_bytes(std::string name, Shape shape, DType dtype, std::shared_ptr<const std::vector<std::byte>> bytes);
  // Marks a tensor as a named graph output. A tensor may be output under several names.
  void output(std::string name, Tensor t);

  // --- variables (docs/training.md) -----------------------------------------------------------
  // State that stays on the device from run to run: a trainable parameter, an optimiser's moment.
  // It starts as `initial` (zeros when empty). Every read of it during a run sees the value it had
  // when the run began; after the run it holds the value assign() gave it, if any. An output that
  // names a variable reads it after the run.
  Tensor variable(std::string name, Shape shape, std::span<const float> initial = {}, DType dtype = DType::f32);
  Tensor variable_bytes(std::string name, Shape shape, DType dtype, std::shared_ptr<const std::vector<std::byte>> bytes);
  // After each run, `variable` holds `value`: a tensor of its shape and dtype that is not itself a
  // variable. One assignment per variable.
  void assign(Tensor variable, Tensor value);
  std::vector<Tensor> variables() const;
  // (variable, value) pairs in the order they were made.
  const std::vector<std::pair<Tensor, Tensor>>& assignments() const noexcept { return assignments_; }

  // --- ops ----------------------------------------------------------------------------------
  // Names are optional: a node without one is called "<op>_<index>".
  Tensor matmul(Tensor a, Tensor b, const MatMulParams& p = {}, std::string name = {});
  // A is [M, K] (or [K, M] with trans_a), B is [K, N] (or [N, K]); C broadcasts to [M, N].
  Tensor gemm(Tensor a, Tensor b, const GemmParams& p = {}, Tensor c = {}, std::string name = {});
  // y = activation(conv(x, w) + bias + residual); bias [K] and residual (y's shape) are optional.
  Tensor conv2d(Tensor x, Tensor w, const Conv2dParams& p = {}, Tensor bias = {},
                std::string name = {}, Tensor residual = {});

  Tensor add(Tensor a, Tensor b, std::string name = {});
  Tensor sub(Tensor a, Tensor b, std::string name = {});
  Tensor mul(Tensor a, Tensor b, std::string name = {});
  Tensor div(Tensor a, Tensor b, std::string name = {});

  Tensor relu(Tensor x, std::string name = {});
  Tensor relu6(Tensor x, std::string name = {});
  Tensor clip(Tensor x, float min, float max, std::string name = {});
  Tensor sigmoid(Tensor x, std::string name = {});
  Tensor silu(Tensor x, std::string name = {});
  Tensor tanh(Tensor x, std::string name = {});
  Tensor gelu(Tensor x, const GeluParams& p = {}, std::string name = {});
  Tensor erf(Tensor x, std::string name = {});
  Tensor sqrt(Tensor x, std::string name = {});
  Tensor reciprocal(Tensor x, std::string name = {});  // 1 / x
  Tensor hard_sigmoid(Tensor x, const HardSigmoidParams& p = {}, std::string name = {});
  Tensor hard_swish(Tensor x, std::string name = {});  // x * hard_sigmoid(x) with alpha 1/6, beta 1/2
  Tensor pow(Tensor a, Tensor b, std::string name = {});  // a ^ b, numpy broadcasting
  // ONNX ReduceSum, ReduceMean, ReduceMax, ReduceMin.
  Tensor reduce(Tensor x, ReduceParams p, std::string name = {});
  // ONNX LayerNormalization and RMSNormalization over the axes from p.axis on; scale and bias have
  // the shape of those axes, and the bias is optional.
  Tensor layer_norm(Tensor x, Tensor scale, Tensor bias = {}, const NormParams& p = {}, std::string name = {});
  Tensor rms_norm(Tensor x, Tensor scale, const NormParams& p = {}, std::string name = {});

  // ONNX BatchNormalization in inference mode; scale, bias, mean and var are [C].
  Tensor batchnorm(Tensor x, Tensor scale, Tensor bias, Tensor mean, Tensor var,
                   const BatchNormParams& p = {}, std::string name = {});

  Tensor max_pool2d(Tensor x, const Pool2dParams& p, std::string name = {});
  Tensor avg_pool2d(Tensor x, const Pool2dParams& p, std::string name = {});
  Tensor global_avg_pool(Tensor x, std::string name = {});  // [N, C, H, W] -> [N, C, 1, 1]
  Tensor global_avg_pool(Tensor x, const GlobalPoolParams& p, std::string name = {});  // NHWC: -> [N, 1, 1, C]

  Tensor softmax(Tensor x, std::int64_t axis = -1, std::string name = {});
  // softmax(x + mask), as attention masks scores: `mask` (large negative where masked) broadcasts to
  // x's shape. Built as an add node "<name>/mask" before the softmax.
  Tensor softmax(Tensor x, std::int64_t axis, Tensor mask, std::string name = {});
  // ONNX Reshape: one dimension may be -1 (inferred); 0 copies the input's dimension.
  Tensor reshape(Tensor x, Shape shape, std::string name = {});
  Tensor flatten(Tensor x, std::int64_t axis = 1, std::string name = {});  // ONNX Flatten
  Tensor transpose(Tensor x, std::vector<std::int64_t> perm, std::string name = {});
  Tensor concat(std::span<const Tensor> xs, std::int64_t axis, std::string name = {});
  Tensor cast(Tensor x, DType to, std::string name = {});
  Tensor slice(Tensor x, const SliceParams& p, std::string name = {});
  // ONNX Split: pieces of `sizes` along `axis`, which must add up to its extent. Each piece is a
  // Slice node named "<name>_<i>": a node has one output, and a slice reads only its own piece.
  std::vector<Tensor> split(Tensor x, std::int64_t axis, std::span<const std::int64_t> sizes,
                            std::string name = {});
  Tensor pad(Tensor x, const PadParams& p, std::string name = {});
  Tensor expand(Tensor x, Shape shape, std::string name = {});  // ONNX Expand
  // Scaled dot-product attention as one node: softmax(scale * q kᵀ + mask) v, q [b, h, sq, d],
  // k [b, h, sk, d], v [b, h, sk, dv] -> [b, h, sq, dv]. The mask is optional and broadcasts to
  // [b, h, sq, sk]; AttentionParams sets the scale and the causal option.
  Tensor attention(Tensor q, Tensor k, Tensor v, const AttentionParams& p = {}, Tensor mask = {},
                   std::string name = {});

  // ONNX Gather: y = data indexed along `axis` by `indices` (i64 or i32; negative ones count from
  // the end, one out of range is an error at run time). y's shape is data's dimensions before
  // `axis`, then indices', then data's after it. data may have any dtype.
  Tensor gather(Tensor data, Tensor indices, std::int64_t axis = 0, std::string name = {});
  // Comparisons of a and b (one dtype, any), numpy broadcasting: a bool result.
  Tensor compare(Tensor a, Tensor b, Comparison op, std::string name = {});
  Tensor equal(Tensor a, Tensor b, std::string name = {}) { return compare(a, b, Comparison::Equal, std::move(name)); }
  Tensor less(Tensor a, Tensor b, std::string name = {}) { return compare(a, b, Comparison::Less, std::move(name)); }
  Tensor less_or_equal(Tensor a, Tensor b, std::string name = {}) {
    return compare(a, b, Comparison::LessOrEqual, std::move(name));
  }
  Tensor greater(Tensor a, Tensor b, std::string name = {}) {
    return compare(a, b, Comparison::Greater, std::move(name));
  }
  Tensor greater_or_equal(Tensor a, Tensor b, std::string name = {}) {
    return compare(a, b, Comparison::GreaterOrEqual, std::move(name));
  }
  // Not, and, or of bool tensors (and and or broadcast); `logical` takes one operand for not, two else.
  Tensor logical(LogicalOp op, std::vector<Tensor> xs, std::string name = {});
  Tensor logical_not(Tensor x, std::string name = {});
  Tensor logical_and(Tensor a, Tensor b, std::string name = {});
  Tensor logical_or(Tensor a, Tensor b, std::string name = {});
  // ONNX Where: x where the bool `cond` is true, else y; x and y share a dtype; all three broadcast.
  Tensor where(Tensor cond, Tensor x, Tensor y, std::string name = {});

  // Backward ops (docs/training.md). dy * f'(x) for the activation
  // p.activation names, x and dy of one shape:
  Tensor activation_backward(Tensor x, Tensor dy, const ActivationBackwardParams& p, std::string name = {});
  // The gradient of max_pool2d(x, p) given dy, its output's gradient: each window's dy goes to the
  // window's first maximum (PyTorch's choice among ties); overlapping windows add up.
  Tensor max_pool2d_backward(Tensor x, Tensor dy, const Pool2dParams& p, std::string name = {});
  // Cross-entropy of softmax(logits) per row of the last axis, computed stably through log-sum-exp:
  // the result has logits' shape without the last axis ([1] for a vector). The labels are float
  // (one-hot or soft) of logits' shape and dtype, or i64/i32 class indices of the result's shape, one
  // per row, each in [0, classes): one outside it, a negative one included, is an error at run time.
  Tensor softmax_cross_entropy(Tensor logits, Tensor labels, std::string name = {});
  // The gradient of softmax_cross_entropy(logits, labels) with respect to the logits for integer
  // labels, given dy, the loss's gradient (its shape): dy (softmax(logits) - one_hot(labels)) per row.
  Tensor softmax_cross_entropy_backward(Tensor logits, Tensor labels, Tensor dy, std::string name = {});

  // Training-mode dropout: x * mask / (1 - p.ratio), mask element i a pure function of (p.seed,
  // step, i) (backends/common/philox.h), the same on every device. `step` is one f32 element (a
  // non-negative integer below 2^24), read when the graph runs: a variable that each run increments
  // (autodiff::step_counter) draws a new mask per run. Ratio 0 passes x on; a ratio outside [0, 1)
  // is an InvalidArgument.
  Tensor dropout(Tensor x, Tensor step, const DropoutParams& p, std::string name = {});

  // The filter gradient of a depthwise conv2d (groups == channels, one filter per channel) with
  // params p, given its input x and its output's gradient dy: dw[c, 0, r, s] = sum over n, p, q of
  // x[n, c, p sh + r dh - pad_top, q sw + s dw - pad_left] dy[n, c, p, q] (zero outside x). R and S
  // are the most taps p leaves room for: a caller whose filters are smaller slices them.
  Tensor depthwise_filter_gradient(Tensor x, Tensor dy, const Conv2dParams& p, std::string name = {});

  // --- inspection ---------------------------------------------------------------------------
  const TensorInfo& info(Tensor t) const;  // throws NotFound for a handle of another graph
  const TensorDesc& desc(Tensor t) const { return info(t).desc; }
  const Shape& shape(Tensor t) const { return info(t).desc.shape; }
  DType dtype(Tensor t) const { return info(t).desc.dtype; }

  const std::vector<Node>& nodes() const noexcept { return nodes_; }
  const std::vector<TensorInfo>& tensors() const noexcept { return tensors_; }
  const std::vector<std::pair<std::string, Tensor>>& outputs() const noexcept { return outputs_; }
  std::vector<Tensor> inputs() const;

 private:
  Tensor add_tensor(TensorInfo info);
  Tensor add_node(OpKind op, OpParams params, std::vector<Tensor> inputs, TensorDesc out,
                  std::string name);
  Tensor binary(OpKind op, Tensor a, Tensor b, std::string name);
  Tensor unary(OpKind op, Tensor x, OpParams params, std::string name);
  Tensor pool(OpKind op, Tensor x, const Pool2dParams& p, std::string name);
  Tensor norm(OpKind op, Tensor x, Tensor scale, Tensor bias, NormParams p, std::string name);
  std::string node_name(OpKind op, std::string name) const;
  void check_name_free(std::string_view name, std::string_view what) const;

  std::vector<TensorInfo> tensors_;
  std::vector<Node> nodes_;
  std::vector<std::pair<std::string, Tensor>> outputs_;
  std::vector<std::pair<Tensor, Tensor>> assignments_;
};

}  // namespace porta
