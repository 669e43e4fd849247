#pragma once
// Arguments of the GPU kernels: plain structs passed by value to a launch. They are built on the
// host by plan/op_args.cpp (plain C++, unit-tested on the CPU) and read by ops/*.cu (nvcc, hipcc),
// so they hold no vendor types. Device pointers are bound just before each run.
#include <cstdint>

#include "core/runtime/backward_math.h"
#include "porta/dtype.hpp"
#include "porta/ops.hpp"

namespace porta::detail::gpu {

inline constexpr int max_dims = max_rank;
inline constexpr int max_batch_dims = max_rank - 2;

// Where element `i` of a dense result of shape `extent` sits in an operand: the sum over result
// dimensions of coordinate * stride (stride 0 along broadcast dimensions).
struct IndexMap {
  int rank = 0;
  std::int64_t extent[max_dims] = {};
  std::int64_t stride[max_dims] = {};
  bool identity = true;  // the operand is dense with the result's shape: offset == i
};

// Offset in the operand of element `i` of the result. constexpr: the kernels and the CPU tests run
// this same code.
constexpr std::int64_t map_index(const IndexMap& map, std::int64_t i) {
  if (map.identity) return i;
  std::int64_t offset = 0;
  for (int d = map.rank - 1; d >= 0; --d) {
    offset += (i % map.extent[d]) * map.stride[d];
    i /= map.extent[d];
  }
  return offset;
}

enum class BinaryOp : std::uint8_t { Add, Sub, Mul, Div, Pow };

struct BinaryArgs {
  BinaryOp op = BinaryOp::Add;
  DType dtype = DType::f32;
  std::int64_t count = 0;
  IndexMap a, b;
  const void* a_data = nullptr;
  const void* b_data = nullptr;
  void* y = nullptr;
};

// Unary elementwise ops, Cast included (the conversion is in the load and the store).
enum class UnaryOp : std::uint8_t {
  Identity, Relu, Clip, Sigmoid, Silu, Tanh, Gelu, GeluTanh,
  Erf, Sqrt, Reciprocal, HardSigmoid, HardSwish,
};

struct UnaryArgs {
  UnaryOp op = UnaryOp::Identity;
  DType x_dtype = DType::f32, y_dtype = DType::f32;
  std::int64_t count = 0;
  float lo = 0.0f, hi = 0.0f;  // Clip's bounds; HardSigmoid's alpha and beta
  const void* x = nullptr;
  void* y = nullptr;
};

struct BatchNormArgs {
  DType dtype = DType::f32;
  std::int64_t count = 0, channels = 1, inner = 1;
  float epsilon = 0.0f;
  const void* x = nullptr;
  const void* scale = nullptr;
  const void* bias = nullptr;
  const void* mean = nullptr;
  const void* var = nullptr;
  void* y = nullptr;
};

struct PoolArgs {
  DType dtype = DType::f32;
  bool max = true;  // max pooling, else average
  bool count_include_pad = false;
  std::int64_t planes = 0, h = 0, w = 0, p = 0, q = 0;
  std::int64_t kernel[2] = {}, stride[2] = {}, pad[4] = {}, dilation[2] = {};
  const void* x = nullptr;
  void* y = nullptr;
};

// Global average pooling and softmax reduce rows of `axis` elements spaced `inner` apart.
struct RowArgs {
  DType dtype = DType::f32;
  std::int64_t outer = 1, axis = 1, inner = 1;
  const void* x = nullptr;
  void* y = nullptr;
};

// A reduction: output element o folds the input elements at kept(o) + reduced(r), r < count.
struct ReduceArgs {
  DType dtype = DType::f32;
  Reduction op = Reduction::Sum;
  std::int64_t outputs = 0, count = 1;
  IndexMap kept, reduced;  // output index -> input offset; reduced index -> offset from there
  const void* x = nullptr;
  void* y = nullptr;
};

// Layer (rms false) or RMS normalisation of `rows` rows of `n` elements; bias may be null.
struct NormArgs {
  DType dtype = DType::f32;
  std::int64_t rows = 0, n = 1;
  float epsilon = 0.0f;
  bool rms = false;
  const void* x = nullptr;
  const void* scale = nullptr;
  const void* bias = nullptr;
  void* y = nullptr;
};

// Transpose, Slice and Expand: y[i] = x[x_offset + map_index(x, i)].
struct GatherArgs {
  int element_bytes = 4;
  std::int64_t count = 0;
  IndexMap x;  // output index -> input offset from x_offset; strides may be negative or 0
  std::int64_t x_offset = 0;
  const void* x_data = nullptr;
  void* y = nullptr;
};

struct PadArgs {
  int element_bytes = 4;
  int rank = 0;
  std::int64_t count = 0;
  std::int64_t y_extent[max_dims] = {}, x_extent[max_dims] = {}, begin[max_dims] = {};
  PadMode mode = PadMode::Constant;
  std::uint64_t value = 0;  // the constant's storage bits
  const void* x = nullptr;
  void* y = nullptr;
};

// Offset in x of element `i` of a pad's result, or -1 where the constant goes.
constexpr std::int64_t pad_index(const PadArgs& args, std::int64_t i) {
  std::int64_t offset = 0, stride = 1;
  for (int d = args.rank - 1; d >= 0; --d) {
    const std::int64_t from = pad_source(i % args.y_extent[d] - args.begin[d], args.x_extent[d], args.mode);
    if (from < 0) return -1;
    offset += from * stride;
    stride *= args.x_extent[d];
    i /= args.y_extent[d];
  }
  return offset;
}

// act(alpha * op(A) op(B) + beta * C) over a broadcast batch; MatMul is alpha 1 without C.
struct GemmArgs {
  DType dtype = DType::f32;
  std::int64_t m = 0, n = 0, k = 0;
  // op(A)(i, l) is at a_row * i + a_col * l; op(B)(l, j) at b_row * l + b_col * j.
  std::int64_t a_row = 0, a_col = 0, b_row = 0, b_col = 0;
  int batch_rank = 0;
  std::int64_t batch_count = 1;
  std::int64_t batch_extent[max_batch_dims] = {};
  std::int64_t a_batch_stride[max_batch_dims] = {};
  std::int64_t b_batch_stride[max_batch_dims] = {};
  float alpha = 1.0f, beta = 0.0f;
  Activation activation = Activation::None;
  bool allow_tf32 = false;  // f32 may run as tf32 on matrix units (CompileOptions::allow_tf32)
  bool has_c = false;
  std::int64_t c_row = 0, c_col = 0;  // C broadcast to [M, N]: element (i, j) at c_row * i + c_col * j
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  void* y = nullptr;
};

struct BatchOffsets {
  std::int64_t a = 0, b = 0;
};

// Element offsets of batch `batch`'s A and B matrices (the result's is batch * m * n).
constexpr BatchOffsets batch_offsets(const GemmArgs& args, std::int64_t batch) {
  BatchOffsets o;
  for (int d = args.batch_rank - 1; d >= 0; --d) {
    const std::int64_t index = batch % args.batch_extent[d];
    batch /= args.batch_extent[d];
    o.a += index * args.a_batch_stride[d];
    o.b += index * args.b_batch_stride[d];
  }
  return o;
}

// Division of 32-bit indices below 2^31 by a divisor fixed at prepare, as a multiply and a shift
// (Granlund and Montgomery's round-up method): kernels decompose indices without a division
// instruction. constexpr: the kernels and the CPU tests run this same code.
struct FastDivisor {
  std::uint32_t divisor = 1, multiplier = 1, shift = 0;

  constexpr FastDivisor() = default;
  constexpr explicit FastDivisor(std::int64_t d) : divisor(static_cast<std::uint32_t>(d)) {
    if (divisor == 0) return;  // a dimension of size 0: no index to divide
    while ((std::uint64_t{1} << shift) < divisor) ++shift;
    // 2^32 (2^shift - d) / d + 1 < 2^32, since d > 2^(shift - 1).
    const std::uint64_t excess = (std::uint64_t{1} << shift) - divisor;
    multiplier = static_cast<std::uint32_t>((excess << 32) / divisor + 1);
  }
  // n / divisor, for n < 2^31; the 64-bit product's high word is one multiply-high instruction.
  constexpr std::uint32_t div(std::uint32_t n) const {
    return static_cast<std::uint32_t>(((std::uint64_t{n} * multiplier >> 32) + n) >> shift);
  }
};

// Conv2d as an implicit GEMM per group: [K/groups, C/groups*R*S] x [C/groups*R*S, N*P*Q].
struct ConvArgs {
  DType dtype = DType::f32;
  std::int64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, p = 0, q = 0;
  std::int64_t groups = 1, c_per_group = 0, k_per_group = 0;
  std::int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0, dilation_h = 1, dilation_w = 1;
  Activation activation = Activation::None;
  bool allow_tf32 = false;  // as in GemmArgs
  // The kernels index in 32 bits (gpu::conv_index_limit) and divide by these (conv_args sets them).
  FastDivisor div_rs, div_s, div_pq, div_p, div_q, div_k, div_k_per_group;
  const void* x = nullptr;
  const void* weights = nullptr;
  const void* bias = nullptr;      // nullptr: no bias
  const void* residual = nullptr;  // nullptr: no residual; else shaped like y
  void* y = nullptr;
};

// y = act(y + addend_scale * addend + residual) in place, the addend broadcast to y through a map:
// the epilogue of vendor library calls that cannot fuse it themselves (Gemm's beta * C; a conv's
// bias, residual and activation where cuDNN does not fuse them). A null addend or residual is
// left out.
struct EpilogueArgs {
  DType dtype = DType::f32;
  std::int64_t count = 0;
  IndexMap addend_map;
  float addend_scale = 1.0f;
  Activation activation = Activation::None;
  const void* addend = nullptr;
  const void* residual = nullptr;  // shaped like y
  void* y = nullptr;
};

// The FMA probe (ops/fma_probe.cu): `blocks` x `threads` threads, each running fma_probe_chains
// chains for `steps` steps and writing their sum to sums[its index]. Sixteen chains cover an FMA
// unit's latency within one warp; the many warps of each multiprocessor do the rest.
inline constexpr int fma_probe_chains = 16;
struct FmaProbeArgs {
  float* sums = nullptr;
  std::int64_t steps = 0;
  float scale = 0.0f, shift = 0.0f;
  unsigned blocks = 1, threads = 1;
};

// ActivationBackward: dx = dy * f'(x) for the forward activation f.
struct ActivationBackwardArgs {
  DType dtype = DType::f32;
  std::int64_t count = 0;
  ActivationGradient forward{};
  const void* x = nullptr;
  const void* dy = nullptr;
  void* dx = nullptr;
};

// MaxPool2dBackward: the forward pool's window (its x is x, its y unused), and the gradients.
struct MaxPoolBackwardArgs {
  PoolArgs window;
  const void* dy = nullptr;
  void* dx = nullptr;
};

// DepthwiseFilterGradient over NCHW planes: x [n, c, h, w], dy [n, c, p, q], dw [c, 1, r, s]; the
// geometry as backward_math.h's depthwise_tap_gradient reads it (pad: top, left).
struct DepthwiseGradientArgs {
  DType dtype = DType::f32;
  std::int64_t n = 0, c = 0, h = 0, w = 0, p = 0, q = 0, r = 0, s = 0;
  std::int64_t stride[2] = {1, 1}, pad[2] = {0, 0}, dilation[2] = {1, 1};
  const void* x = nullptr;
  const void* dy = nullptr;
  void* dw = nullptr;
};

// How a kernel that reads indices (gather's, the cross-entropy ops' class labels) reports one out of
// range, since a kernel cannot throw: the first thread to find one sets `raised` (0 to 1, atomically)
// and writes the index; the runtime clears the record before each run and reads it after.
struct IndexError {
  unsigned long long raised = 0;
  long long index = 0;
};

// SoftmaxCrossEntropy over `rows` rows of `classes` logits: float labels of the logits' shape, or
// (index_labels) one class index per row, i64 (index64) or i32, in [0, classes). A row whose label is
// out of range (a negative one included) gets a zero loss and reports the label in *error.
struct SoftmaxCrossEntropyArgs {
  DType dtype = DType::f32;
  std::int64_t rows = 0, classes = 1;
  bool index_labels = false, index64 = true;
  const void* z = nullptr;
  const void* labels = nullptr;
  void* loss = nullptr;
  IndexError* error = nullptr;  // with index_labels
};

// SoftmaxCrossEntropyBackward: dz = dy (softmax(z) - one_hot(label)) over `rows` rows of `classes`
// logits, one dy and one i64 (index64) or i32 class index per row. A label out of range is reported
// in *error (its row's gradient leaves out the one-hot term).
struct SoftmaxCrossEntropyBackwardArgs {
  DType dtype = DType::f32;
  std::int64_t rows = 0, classes = 1;
  bool index64 = true;
  const void* z = nullptr;
  const void* labels = nullptr;
  const void* dy = nullptr;
  void* dz = nullptr;
  IndexError* error = nullptr;
};

// Attention (ops/attention.cu): the node's sizes, and q, k, v, an optional mask (null when none), y.
// Its tiles hold at most attention_max_head_dim elements of a q, k or v row.
inline constexpr std::int64_t attention_max_head_dim = 128;
struct AttentionArgs {
  DType dtype = DType::f32;
  std::int64_t problems = 0, heads = 1, queries = 0, keys = 0, depth = 0, width = 0;
  std::int64_t mask_stride[4] = {};
  float scale = 1.0f;
  bool causal = false;
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* mask = nullptr;
  void* y = nullptr;
};

// Gather (ops/index_ops.cu): y[outer, j, inner] = data[outer, indices[j], inner] over `count` output
// elements, the indices (i64 or i32) wrapped from the end where negative. An index out of range
// gathers zeros and is reported in *error.
struct IndexGatherArgs {
  int element_bytes = 4;
  bool index64 = true;
  std::int64_t count = 0, index_count = 0, axis = 1, inner = 1;
  const void* data = nullptr;
  const void* indices = nullptr;
  void* y = nullptr;
  IndexError* error = nullptr;
};

// Comparisons, logical ops and where (ops/logic.cu), over operands broadcast to the result.
// A bool from two operands of `dtype`: Op is Comparison (integers compared exactly, floats as f32)
// or LogicalOp (bool operands; not reads a only).
template <class Op> struct BoolResultArgs {
  Op op{};
  DType dtype = DType::boolean;
  std::int64_t count = 0;
  IndexMap a, b;
  const void* a_data = nullptr;
  const void* b_data = nullptr;
  void* y = nullptr;
};
using CompareArgs = BoolResultArgs<Comparison>;
using LogicalArgs = BoolResultArgs<LogicalOp>;

// y = cond ? x : other, elements of element_bytes moved as bits.
struct WhereArgs {
  int element_bytes = 4;
  std::int64_t count = 0;
  IndexMap cond, x, other;
  const void* cond_data = nullptr;
  const void* x_data = nullptr;
  const void* other_data = nullptr;
  void* y = nullptr;
};

// Dropout (ops/dropout.cu): y = x * scale where backends/common/philox.h keeps draw offset + i / span
// of the stream (seed, step), else 0; step is read from its one-element f32 tensor at run time.
struct DropoutArgs {
  DType dtype = DType::f32;
  std::int64_t count = 0;
  std::uint64_t seed = 0;
  std::uint32_t threshold = 0;
  float scale = 1.0f;
  std::uint64_t span = 1;  // consecutive elements sharing one draw
  std::uint64_t offset = 0;  // the draw of element 0
  const void* x = nullptr;
  const void* step = nullptr;  // one f32
  void* y = nullptr;
};

}  // namespace porta::detail::gpu
