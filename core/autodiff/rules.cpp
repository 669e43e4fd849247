// Which backward rule each op has (rules.hpp).
#include "core/autodiff/rules.hpp"

namespace porta::autodiff::detail {

Rule backward_rule(OpKind op) {
  static_assert(op_kind_count == 39, "a new OpKind: give it its rule (or nullptr) here, then count it");
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
    case OpKind::Gelu: return activation_backward;
    case OpKind::BatchNorm: return batchnorm_backward;
    case OpKind::GlobalAvgPool: return global_avg_pool_backward;
    case OpKind::Softmax: return softmax_backward;
    case OpKind::Reshape: return reshape_backward;
    case OpKind::Transpose: return transpose_backward;
    case OpKind::Concat: return concat_backward;
    case OpKind::Cast: return cast_backward;
    case OpKind::Reduce: return reduce_backward;
    // Each needs a backward op porta does not have yet (docs/training.md).
    case OpKind::Conv2d:
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d: return nullptr;
    // Not written yet: the transformer ops (docs/training.md).
    case OpKind::Erf:
    case OpKind::Sqrt:
    case OpKind::Reciprocal:
    case OpKind::HardSigmoid:
    case OpKind::HardSwish:
    case OpKind::Pow:
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
    case OpKind::Slice:
    case OpKind::Pad:
    case OpKind::Expand: return nullptr;
    // Integer indices and bool masks carry no gradient; gather's rule (a scatter-add) is not written.
    case OpKind::Gather:
    case OpKind::Compare:
    case OpKind::Logical:
    case OpKind::Where: return nullptr;
    case OpKind::Attention: return nullptr;  // not written yet
  }
  return nullptr;
}

}  // namespace porta::autodiff::detail
