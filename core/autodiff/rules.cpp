// Which backward rule each op has (rules.hpp).
#include "core/autodiff/rules.hpp"

namespace porta::autodiff::detail {

Rule backward_rule(OpKind op) {
  static_assert(op_kind_count == 45, "a new OpKind: give it its rule (or nullptr) here, then count it");
  switch (op) {
    case OpKind::MatMul: return matmul_backward;
    case OpKind::Gemm: return gemm_backward;
    case OpKind::Add: return add_backward;
    case OpKind::Sub: return sub_backward;
    case OpKind::Mul: return mul_backward;
    case OpKind::Div: return div_backward;
    case OpKind::Relu:
    case OpKind::Clip:
    case OpKind::Sigmoid:
    case OpKind::Silu:
    case OpKind::Tanh:
    case OpKind::Gelu:
    case OpKind::HardSigmoid:
    case OpKind::HardSwish: return activation_backward;
    case OpKind::BatchNorm: return batchnorm_backward;
    case OpKind::GlobalAvgPool: return global_avg_pool_backward;
    case OpKind::Softmax: return softmax_backward;
    case OpKind::Reshape: return reshape_backward;
    case OpKind::Transpose: return transpose_backward;
    case OpKind::Concat: return concat_backward;
    case OpKind::Cast: return cast_backward;
    case OpKind::Reduce: return reduce_backward;
    case OpKind::Conv2d: return conv2d_backward;
    case OpKind::MaxPool2d: return max_pool_backward;
    case OpKind::AvgPool2d: return avg_pool_backward;
    case OpKind::Erf: return erf_backward;
    case OpKind::Sqrt: return sqrt_backward;
    case OpKind::Reciprocal: return reciprocal_backward;
    case OpKind::Pow: return pow_backward;
    case OpKind::LayerNorm: return layer_norm_backward;
    case OpKind::Slice: return slice_backward;
    case OpKind::Pad: return pad_backward;
    case OpKind::Expand: return expand_backward;
    case OpKind::SoftmaxCrossEntropy: return softmax_cross_entropy_backward;
    // Not written yet (docs/training.md): RMS norm, and the backward ops' own backward.
    case OpKind::RmsNorm:
    case OpKind::ActivationBackward:
    case OpKind::MaxPool2dBackward:
    case OpKind::SoftmaxCrossEntropyBackward: return nullptr;
    case OpKind::Gather: return gather_backward;
    // Integer indices and bool masks carry no gradient.
    case OpKind::Compare:
    case OpKind::Logical:
    case OpKind::Where: return nullptr;
    case OpKind::Attention: return attention_backward;
    case OpKind::Dropout: return dropout_backward;
    case OpKind::DepthwiseFilterGradient: return nullptr;
  }
  return nullptr;
}

}  // namespace porta::autodiff::detail
