#include "graph_gen/random_graph.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "op_cases/verify.hpp"
#include "porta/error.hpp"

namespace porta::graph_gen {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Not 'x' + std::to_string(n): GCC 12 warns falsely (-Wrestrict) about that expression.
std::string numbered(char prefix, std::size_t n) {
  std::string name(1, prefix);
  name += std::to_string(n);
  return name;
}

std::int64_t numel(const Shape& shape) {
  std::int64_t n = 1;
  for (const auto d : shape) n *= d;
  return n;
}

Shape constant_shape(ConstantShape kind, const Shape& of) {
  static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
  switch (kind) {
    case ConstantShape::Scalar: return {1};
    case ConstantShape::PerChannel: {
      Shape s(of.size() - 1, 1);
      s[0] = of[1];
      return s;
    }
    case ConstantShape::LastDim: return {of.back()};
    default: return of;
  }
}

// numpy broadcasting of `operand` to exactly `result`.
bool broadcasts_to(const Shape& operand, const Shape& result) {
  if (operand.size() > result.size()) return false;
  const std::size_t lead = result.size() - operand.size();
  for (std::size_t d = 0; d < operand.size(); ++d)
    if (operand[d] != 1 && operand[d] != result[lead + d]) return false;
  return true;
}

// Builds steps one at a time; throws porta::Error where the builder refuses one.
class StepBuilder {
 public:
  Graph g;
  std::vector<Tensor> values;  // per step

  void add(const Step& s) { values.push_back(s.input ? g.input(next_input(), s.shape, s.dtype) : add_op(s)); }

 private:
  Tensor operand(const Step& s, std::size_t i) const {
    if (i >= s.operands.size() || s.operands[i] < 0 || static_cast<std::size_t>(s.operands[i]) >= values.size())
      throw Error(ErrorCode::InvalidArgument, "graph_gen: a step's operand is missing or not an earlier step");
    return values[static_cast<std::size_t>(s.operands[i])];
  }

  std::string next_input() { return numbered('x', inputs_++); }

  // Seeded uniform values in [lo, hi); with `signs`, in +-[lo, hi): safe factors and divisors.
  Tensor constant(const Shape& shape, DType dtype, std::uint64_t seed, float lo, float hi, bool signs = false) {
    std::vector<float> v = cases::random_values(static_cast<std::size_t>(numel(shape)), seed, signs ? -1.0f : lo, hi);
    if (signs)
      for (float& x : v) x = std::copysign(lo + (hi - lo) * std::abs(x) / hi, x);
    return g.constant(numbered('c', g.tensors().size()), shape, v, dtype);
  }

  // Weights of variance 1 / fan_in keep activations near unit scale through a chain of layers, so
  // that f16 never overflows and no value underflows.
  Tensor weights(const Shape& shape, DType dtype, std::uint64_t seed, std::int64_t fan_in) {
    const auto bound = static_cast<float>(std::sqrt(3.0 / static_cast<double>(std::max<std::int64_t>(fan_in, 1))));
    return constant(shape, dtype, seed, -bound, bound);
  }

  static const Shape& rank_checked(const Graph& g, Tensor x, std::size_t rank) {
    if (g.shape(x).size() != rank)
      throw Error(ErrorCode::ShapeMismatch, "graph_gen: operand " + to_string(g.shape(x)) + " is not " +
                                                std::to_string(rank) + "-D");
    return g.shape(x);
  }

  Tensor add_op(const Step& s) {
    const Tensor x = operand(s, 0);
    const DType t = g.dtype(x);
    static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
    switch (s.op) {
      case OpKind::Conv2d: {
        auto p = std::get<Conv2dParams>(s.params);
        const Shape& sx = rank_checked(g, x, 4);
        const std::int64_t channels = sx[p.layout == Layout::NHWC ? 3 : 1];
        if (s.depthwise) p.groups = channels;
        const std::int64_t filters = s.width > 0 ? s.width : channels;
        const Shape w_shape{filters, channels / std::max<std::int64_t>(p.groups, 1), s.window[0], s.window[1]};
        const Tensor w = s.weights_as_input ? g.input(next_input(), w_shape, t)
                                            : weights(w_shape, t, s.seed, w_shape[1] * s.window[0] * s.window[1]);
        const Tensor bias = s.bias ? constant({filters}, t, s.seed + 1, -0.5f, 0.5f) : Tensor{};
        return g.conv2d(x, w, p, bias, {}, p.residual ? operand(s, 1) : Tensor{});
      }
      case OpKind::Gemm: {
        const auto& p = std::get<GemmParams>(s.params);
        const Shape& sa = rank_checked(g, x, 2);
        const std::int64_t m = p.trans_a ? sa[1] : sa[0], k = p.trans_a ? sa[0] : sa[1];
        const Tensor b = weights(p.trans_b ? Shape{s.width, k} : Shape{k, s.width}, t, s.seed, k);
        const Tensor c = s.constant == ConstantShape::None
                             ? Tensor{}
                             : constant(constant_shape(s.constant, {m, s.width}), t, s.seed + 1, -0.5f, 0.5f);
        return g.gemm(x, b, p, c);
      }
      case OpKind::MatMul: {
        const auto& p = std::get<MatMulParams>(s.params);
        if (s.constant == ConstantShape::None) return g.matmul(x, operand(s, 1), p);
        const Shape& sa = g.shape(x);
        const std::int64_t k = sa.size() == 1 ? sa[0] : (p.trans_a ? sa[sa.size() - 2] : sa.back());
        return g.matmul(x, weights(p.trans_b ? Shape{s.width, k} : Shape{k, s.width}, t, s.seed, k), p);
      }
      case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: {
        Tensor b;
        if (s.constant == ConstantShape::None) {
          b = operand(s, 1);
        } else {
          if (s.constant == ConstantShape::PerChannel && g.shape(x).size() < 2)
            throw Error(ErrorCode::ShapeMismatch, "graph_gen: a per-channel constant needs a channel dimension");
          const bool factor = s.op == OpKind::Mul || s.op == OpKind::Div;
          b = constant(constant_shape(s.constant, g.shape(x)), t, s.seed, factor ? 0.5f : -1.0f, factor ? 1.5f : 1.0f,
                       factor);
        }
        static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
        switch (s.op) {
          case OpKind::Add: return g.add(x, b);
          case OpKind::Sub: return g.sub(x, b);
          case OpKind::Mul: return g.mul(x, b);
          default: return g.div(x, b);
        }
      }
      case OpKind::BatchNorm: {
        if (g.shape(x).size() < 2)
          throw Error(ErrorCode::ShapeMismatch, "graph_gen: batchnorm needs a channel dimension");
        const Shape c{g.shape(x)[1]};
        return g.batchnorm(x, constant(c, t, s.seed, 0.5f, 1.5f), constant(c, t, s.seed + 1, -0.5f, 0.5f),
                           constant(c, t, s.seed + 2, -0.5f, 0.5f), constant(c, t, s.seed + 3, 0.5f, 2.0f),
                           std::get<BatchNormParams>(s.params));
      }
      case OpKind::Relu: return g.relu(x);
      case OpKind::Clip: {
        const auto& p = std::get<ClipParams>(s.params);
        return g.clip(x, p.min, p.max);
      }
      case OpKind::Sigmoid: return g.sigmoid(x);
      case OpKind::Silu: return g.silu(x);
      case OpKind::Tanh: return g.tanh(x);
      case OpKind::Gelu: return g.gelu(x, std::get<GeluParams>(s.params));
      case OpKind::MaxPool2d: return g.max_pool2d(x, std::get<Pool2dParams>(s.params));
      case OpKind::AvgPool2d: return g.avg_pool2d(x, std::get<Pool2dParams>(s.params));
      case OpKind::GlobalAvgPool: return g.global_avg_pool(x, std::get<GlobalPoolParams>(s.params));
      case OpKind::Softmax: return g.softmax(x, std::get<SoftmaxParams>(s.params).axis);
      case OpKind::Reshape: return g.reshape(x, std::get<ReshapeParams>(s.params).shape);
      case OpKind::Transpose: return g.transpose(x, std::get<TransposeParams>(s.params).perm);
      case OpKind::Concat: {
        std::vector<Tensor> xs;
        for (std::size_t i = 0; i < s.operands.size(); ++i) xs.push_back(operand(s, i));
        return g.concat(xs, std::get<ConcatParams>(s.params).axis);
      }
      case OpKind::Cast: return g.cast(x, std::get<CastParams>(s.params).to);
      case OpKind::Erf: return g.erf(x);
      case OpKind::Sqrt: return g.sqrt(x);
      case OpKind::Reciprocal: return g.reciprocal(x);
      case OpKind::HardSigmoid: return g.hard_sigmoid(x, std::get<HardSigmoidParams>(s.params));
      case OpKind::HardSwish: return g.hard_swish(x);
      case OpKind::Reduce: return g.reduce(x, std::get<ReduceParams>(s.params));
      case OpKind::LayerNorm:
      case OpKind::RmsNorm: {  // scale in [0.5, 1.5), bias in [-0.5, 0.5) over the normalised axes
        const auto& p = std::get<NormParams>(s.params);
        const Shape& sx = g.shape(x);
        const auto rank = static_cast<std::int64_t>(sx.size());
        if (p.axis < -rank || p.axis >= rank) throw Error(ErrorCode::InvalidArgument, "graph_gen: no such axis");
        const Shape n(sx.begin() + (p.axis < 0 ? p.axis + rank : p.axis), sx.end());
        const Tensor scale = constant(n, t, s.seed, 0.5f, 1.5f);
        if (s.op == OpKind::RmsNorm) return g.rms_norm(x, scale, p);
        return g.layer_norm(x, scale, s.bias ? constant(n, t, s.seed + 1, -0.5f, 0.5f) : Tensor{}, p);
      }
      case OpKind::Pow:  // exponents in [-2, 2) when constant
        return g.pow(x, s.constant == ConstantShape::None
                            ? operand(s, 1)
                            : constant(constant_shape(s.constant, g.shape(x)), t, s.seed, -2.0f, 2.0f));
      case OpKind::Slice: return g.slice(x, std::get<SliceParams>(s.params));
      case OpKind::Pad: return g.pad(x, std::get<PadParams>(s.params));
      case OpKind::Expand: return g.expand(x, std::get<ExpandParams>(s.params).shape);
      // Not drawn: the generator makes float graphs, which every backend runs (docs/ops.md); the
      // cross-entropy gradient takes integer class labels only.
      case OpKind::Gather: case OpKind::Compare: case OpKind::Logical: case OpKind::Where:
      case OpKind::SoftmaxCrossEntropyBackward: break;
      // Not drawn either: the op-case registry and tests/test_autodiff.cpp cover it.
      case OpKind::DepthwiseFilterGradient: break;
      case OpKind::ActivationBackward:
        return g.activation_backward(x, operand(s, 1), std::get<ActivationBackwardParams>(s.params));
      case OpKind::MaxPool2dBackward: return g.max_pool2d_backward(x, operand(s, 1), std::get<Pool2dParams>(s.params));
      case OpKind::SoftmaxCrossEntropy: return g.softmax_cross_entropy(x, operand(s, 1));
      case OpKind::Attention:  // self-attention: x is q, k and v at once
        rank_checked(g, x, 4);
        return g.attention(x, x, x, std::get<AttentionParams>(s.params));
      case OpKind::Dropout:  // a step of any float value: its integer part picks the mask
        return g.dropout(x, constant({1}, DType::f32, s.seed, 0.0f, 1000.0f), std::get<DropoutParams>(s.params));
    }
    throw Error(ErrorCode::InvalidArgument, "graph_gen: no step builds " + std::string(to_string(s.op)));
  }

  std::size_t inputs_ = 0;
};

// Grows a recipe a step or a pattern at a time on a scratch graph, which knows every shape so far;
// a step the builder refuses or that outgrows the limits is left out.
class Generator {
 public:
  Generator(Choices& choices, const GenerateLimits& limits) : c_(choices), limits_(limits) {}

  Recipe run() && {
    constants_seed_ = c_.below(1u << 30);
    recipe_.input_seed = c_.below(1u << 30);
    const DType dtype = c_.percent(60) ? DType::f32 : c_.pick({DType::f16, DType::bf16});
    const int inputs = 1 + static_cast<int>(c_.below(2));
    for (int i = 0; i < inputs; ++i) add_input(dtype);
    const int target = 3 + static_cast<int>(c_.below(static_cast<std::uint32_t>(std::max(1, limits_.max_steps - 2))));
    for (int attempt = 0; ops_ < target && attempt < 4 * limits_.max_steps; ++attempt) move();
    mark_outputs();
    return std::move(recipe_);
  }

 private:
  using Fits = std::function<bool(std::int32_t)>;

  const Shape& shape(std::int32_t i) const { return scratch_.g.shape(scratch_.values[static_cast<std::size_t>(i)]); }
  DType dtype(std::int32_t i) const { return scratch_.g.dtype(scratch_.values[static_cast<std::size_t>(i)]); }
  std::size_t rank(std::int32_t i) const { return shape(i).size(); }
  std::int32_t last() const { return static_cast<std::int32_t>(recipe_.steps.size()) - 1; }
  Layout layout(std::int32_t i) const { return layouts_[static_cast<std::size_t>(i)]; }
  std::int64_t channels(std::int32_t i) const { return shape(i)[layout(i) == Layout::NHWC ? 3 : 1]; }

  // Keeps `s` where the builder accepts it and every tensor it made is within the limits; returns
  // its index, or nullopt. A 4-D result is taken to be in `layout`.
  std::optional<std::int32_t> try_add(Step s, std::optional<Layout> layout = std::nullopt) {
    if (ops_ >= limits_.max_steps && !s.input) return std::nullopt;
    s.seed = constants_seed_ + 16 * recipe_.steps.size();
    const std::size_t tensors_before = scratch_.g.tensors().size();
    try {
      scratch_.add(s);
    } catch (const Error&) {
      return std::nullopt;
    }
    const auto& tensors = scratch_.g.tensors();
    const bool small = std::all_of(tensors.begin() + static_cast<std::ptrdiff_t>(tensors_before), tensors.end(),
                                   [&](const TensorInfo& t) { return t.desc.numel() <= limits_.max_elements; });
    if (!small) {
      scratch_.values.pop_back();
      return std::nullopt;
    }
    if (!s.input) ++ops_;
    layouts_.push_back(layout ? *layout : s.operands.empty() ? Layout::NCHW : this->layout(s.operands[0]));
    recipe_.steps.push_back(std::move(s));
    return last();
  }

  Step op_step(OpKind op, std::vector<std::int32_t> operands, OpParams params = {}) {
    Step s;
    s.op = op;
    s.operands = std::move(operands);
    s.params = std::move(params);
    return s;
  }

  void add_input(DType dtype) {
    Step s;
    s.input = true;
    s.dtype = dtype;
    if (c_.percent(20)) {
      s.shape = {1 + c_.below(8), 1 + c_.below(32)};
      try_add(std::move(s));
      return;
    }
    const std::int64_t n = 1 + c_.below(2), ch = 1 + c_.below(8), h = 3 + c_.below(8), w = 3 + c_.below(8);
    const Layout layout = c_.percent(90) ? Layout::NCHW : Layout::NHWC;
    s.shape = layout == Layout::NCHW ? Shape{n, ch, h, w} : Shape{n, h, w, ch};
    try_add(std::move(s), layout);
  }

  // A step whose result `fits`: mostly the latest such (a chain), else any (a branch, or another
  // consumer of a tensor that already has one).
  std::optional<std::int32_t> pick(const Fits& fits) {
    std::vector<std::int32_t> candidates;
    for (std::int32_t i = 0; i <= last(); ++i)
      if (fits(i)) candidates.push_back(i);
    if (candidates.empty()) return std::nullopt;
    if (c_.percent(60)) return candidates.back();
    return candidates[c_.below(static_cast<std::uint32_t>(candidates.size()))];
  }
  std::optional<std::int32_t> pick_any() {
    return pick([](std::int32_t) { return true; });
  }
  std::optional<std::int32_t> pick_rank(std::size_t r) {
    return pick([&](std::int32_t i) { return rank(i) == r; });
  }
  // Another operand for `x`: same dtype, and a shape that broadcasts to x's.
  std::optional<std::int32_t> pick_partner(std::int32_t x) {
    return pick([&](std::int32_t i) { return dtype(i) == dtype(x) && broadcasts_to(shape(i), shape(x)); });
  }

  Activation activation() {
    return c_.pick({Activation::Relu, Activation::Relu6, Activation::Sigmoid, Activation::Silu, Activation::Tanh,
                    Activation::Gelu});
  }

  // One step or pattern. Patterns the fusion and layout passes rewrite come often; single ops make
  // their near misses.
  void move() {
    struct Move {
      int weight;
      void (Generator::*make)();
    };
    static constexpr Move moves[] = {
        {14, &Generator::single_conv},
        {10, &Generator::conv_batchnorm_activation},
        {8, &Generator::residual_block},
        {5, &Generator::conv_read_twice},
        {7, &Generator::gemm_bias_activation},
        {4, &Generator::silu_pattern},
        {8, &Generator::single_unary},
        {9, &Generator::binary},
        {3, &Generator::single_batchnorm},
        {5, &Generator::pool},
        {2, &Generator::global_pool},
        {5, &Generator::concat},
        {4, &Generator::cast},
        {2, &Generator::softmax},
        {3, &Generator::reshape},
        {3, &Generator::transpose},
        {3, &Generator::matmul},
        {4, &Generator::math},
        {2, &Generator::reduce},
        {2, &Generator::norm},
        {4, &Generator::slice_pad_expand},
        {1, &Generator::backward},
        {2, &Generator::attention},
        {1, &Generator::dropout},
    };
    static constexpr int total = [] {
      int sum = 0;
      for (const Move& m : moves) sum += m.weight;
      return sum;
    }();
    int roll = static_cast<int>(c_.below(total));
    const Move* m = moves;
    while (roll >= m->weight) roll -= (m++)->weight;
    (this->*m->make)();
  }

  // A conv, now and then in the other layout than its input's (after a transpose).
  void single_conv() {
    auto x = pick_rank(4);
    if (x && c_.percent(8)) x = in_layout(*x, layout(*x) == Layout::NCHW ? Layout::NHWC : Layout::NCHW);
    if (x) conv(*x);
  }

  void single_unary() {
    if (const auto x = pick_any()) unary(*x);
  }

  // Elementwise math; sqrt, reciprocal and pow after a clip that keeps them in their domain (and
  // f16's range): [0, 6], [0.5, 2] and bases in [0.25, 4].
  void math() {
    const auto x = pick_any();
    if (!x) return;
    const auto clipped = [&](float lo, float hi) { return try_add(op_step(OpKind::Clip, {*x}, ClipParams{lo, hi})); };
    switch (c_.below(6)) {
      case 0: try_add(op_step(OpKind::Erf, {*x})); return;
      case 1:
        try_add(op_step(OpKind::HardSigmoid, {*x}, HardSigmoidParams{c_.pick({0.2f, 0.3f}), c_.pick({0.5f, 0.4f})}));
        return;
      case 2: try_add(op_step(OpKind::HardSwish, {*x})); return;
      case 3:
        if (const auto y = clipped(0.0f, 6.0f)) try_add(op_step(OpKind::Sqrt, {*y}));
        return;
      case 4:
        if (const auto y = clipped(0.5f, 2.0f)) try_add(op_step(OpKind::Reciprocal, {*y}));
        return;
      default:
        if (const auto y = clipped(0.25f, 4.0f)) {
          Step s = op_step(OpKind::Pow, {*y});
          s.constant = c_.pick({ConstantShape::Scalar, ConstantShape::LastDim, ConstantShape::Full});
          try_add(std::move(s));
        }
    }
  }

  // A reduction over one axis (either end, as a negative or a positive index) or all of them.
  void reduce() {
    const auto x = pick_any();
    if (!x) return;
    const auto r = static_cast<std::int64_t>(rank(*x));
    std::vector<std::int64_t> axes;
    switch (c_.below(4)) {
      case 0: axes = {-1}; break;
      case 1: axes = {0}; break;
      case 2: axes = {r - 2 >= 0 ? r - 2 : 0, r - 1}; break;
      default: break;  // every axis
    }
    const Reduction op = c_.pick({Reduction::Sum, Reduction::Mean, Reduction::Max, Reduction::Min});
    try_add(op_step(OpKind::Reduce, {*x}, ReduceParams{op, axes, c_.percent(70)}));
  }

  // Layer or RMS normalisation over the last axis, or the last two.
  void norm() {
    const auto x = pick_any();
    if (!x) return;
    Step s = op_step(c_.percent(50) ? OpKind::LayerNorm : OpKind::RmsNorm, {*x},
                     NormParams{.axis = c_.pick<std::int64_t>({-1, -2}), .epsilon = c_.pick({1e-5f, 1e-3f})});
    s.bias = c_.percent(70);
    try_add(std::move(s));
  }

  // Self-attention over a 4-D tensor read as [batch, heads, seq, head_dim].
  void attention() {
    if (const auto x = pick_rank(4))
      try_add(op_step(OpKind::Attention, {*x},
                      AttentionParams{.scale = c_.pick({0.0f, 0.5f}), .causal = c_.percent(50)}));
  }

  void dropout() {
    if (const auto x = pick_any())
      try_add(op_step(OpKind::Dropout, {*x},
                      DropoutParams{.ratio = c_.pick({0.0f, 0.1f, 0.5f}), .seed = c_.below(1u << 30)}));
  }

  void single_batchnorm() {
    if (const auto x = pick([&](std::int32_t i) { return rank(i) >= 2; })) batchnorm(*x);
  }

  void global_pool() {
    if (const auto x = pick_rank(4)) try_add(op_step(OpKind::GlobalAvgPool, {*x}, GlobalPoolParams{layout(*x)}));
  }

  void softmax() {
    if (const auto x = pick_any())
      try_add(op_step(OpKind::Softmax, {*x}, SoftmaxParams{c_.pick<std::int64_t>({-1, 1})}));
  }

  std::optional<std::int32_t> conv(std::int32_t x) {
    Step s = op_step(OpKind::Conv2d, {x});
    Conv2dParams p{.layout = layout(x)};
    const std::int64_t r = c_.pick<std::int64_t>({1, 3, 3, 3, 5});
    s.window = {r, c_.percent(85) ? r : c_.pick<std::int64_t>({1, 3})};
    for (auto& stride : p.stride) stride = c_.percent(75) ? 1 : 2;
    if (c_.percent(10)) p.dilation = {2, 2};
    const std::uint32_t padding = c_.below(10);
    for (int i = 0; i < 4; ++i) {
      const std::int64_t same = p.dilation[i % 2] * (s.window[i % 2] - 1) / 2;
      p.pad[i] = padding < 7 ? same : padding < 9 ? 0 : c_.below(static_cast<std::uint32_t>(same + 2));
    }
    const std::uint32_t grouping = c_.below(20);
    s.depthwise = grouping < 3;
    if (grouping == 3 && channels(x) % 2 == 0) p.groups = 2;
    s.width = s.depthwise ? 0 : c_.pick<std::int64_t>({0, 0, 2, 4, 6, 8, 16});
    if (p.groups == 2 && s.width % 2 != 0) s.width = 0;
    s.bias = c_.percent(50);
    s.weights_as_input = c_.percent(5);
    if (c_.percent(15)) p.activation = activation();
    s.params = p;
    return try_add(std::move(s));
  }

  // A conv whose output keeps x's shape (1x1 or 3x3, stride 1, same padding, as many filters as
  // channels), so that a residual add of x fits.
  std::optional<std::int32_t> shape_keeping_conv(std::int32_t x, bool bias, std::optional<std::int32_t> residual = {}) {
    Step s = op_step(OpKind::Conv2d, {x});
    const std::int64_t r = c_.pick<std::int64_t>({1, 3, 3});
    s.window = {r, r};
    Conv2dParams p{.layout = layout(x)};
    p.pad = {r / 2, r / 2, r / 2, r / 2};
    if (residual) {
      p.residual = true;
      s.operands.push_back(*residual);
    }
    s.params = p;
    s.bias = bias;
    return try_add(std::move(s));
  }

  // act(x) as the fusion pass meets it: an op it turns into an epilogue, or a near miss (tanh gelu,
  // a clip other than relu6, x * sigmoid(x) spelt out).
  std::optional<std::int32_t> activation_step(std::int32_t x) {
    switch (c_.below(10)) {
      case 0: case 1: case 2: return try_add(op_step(OpKind::Relu, {x}));
      case 3: return try_add(op_step(OpKind::Clip, {x}, ClipParams{0.0f, 6.0f}));
      case 4: return try_add(op_step(OpKind::Silu, {x}));
      case 5: return spelt_silu(x);
      case 6: return try_add(op_step(OpKind::Sigmoid, {x}));
      case 7: return try_add(op_step(OpKind::Gelu, {x}, GeluParams{c_.percent(50)}));
      case 8: return try_add(op_step(OpKind::Clip, {x}, ClipParams{-0.5f, 1.0f}));
      default: return try_add(op_step(OpKind::Tanh, {x}));
    }
  }

  // x * sigmoid(x), as ONNX exports silu; now and then the sigmoid is read again, which keeps it.
  std::optional<std::int32_t> spelt_silu(std::int32_t x) {
    const auto s = try_add(op_step(OpKind::Sigmoid, {x}));
    if (!s) return std::nullopt;
    if (c_.percent(20)) recipe_.steps[static_cast<std::size_t>(*s)].outputs = 1;
    return try_add(op_step(OpKind::Mul, c_.percent(50) ? std::vector{x, *s} : std::vector{*s, x}));
  }

  void conv_batchnorm_activation() {
    const auto x = pick_rank(4);
    if (!x) return;
    Step s = op_step(OpKind::Conv2d, {*x});
    const std::int64_t r = c_.pick<std::int64_t>({1, 3});
    s.window = {r, r};
    s.width = c_.pick<std::int64_t>({0, 4, 8});
    s.bias = c_.percent(30);
    s.weights_as_input = c_.percent(5);
    // NCHW mostly: the layout batchnorms fold into.
    const auto input = in_layout(*x, c_.percent(92) ? Layout::NCHW : Layout::NHWC);
    if (!input) return;
    s.operands = {*input};
    Conv2dParams p{.layout = layout(*input)};
    p.pad = {r / 2, r / 2, r / 2, r / 2};
    if (c_.percent(20)) p.stride = {2, 2};
    s.params = p;
    std::optional<std::int32_t> y = try_add(std::move(s));
    if (!y) return;
    for (int i = c_.percent(15) ? 2 : 1; i-- > 0 && y;) y = batchnorm(*y);
    if (y && c_.percent(85)) activation_step(*y);
  }

  std::optional<std::int32_t> batchnorm(std::int32_t x) {
    return try_add(op_step(OpKind::BatchNorm, {x}, BatchNormParams{c_.pick({1e-5f, 1e-3f})}));
  }

  // relu(conv(x) + x) in the ways a ResNet block is built: the add after a batchnorm or none, on
  // either side, or the residual given to the conv itself.
  void residual_block() {
    const auto x = pick_rank(4);
    if (!x) return;
    if (c_.percent(25)) {
      if (const auto y = shape_keeping_conv(*x, c_.percent(50), *x); y && c_.percent(70)) activation_step(*y);
      return;
    }
    auto y = shape_keeping_conv(*x, c_.percent(50));
    if (y && c_.percent(40)) y = batchnorm(*y);
    if (!y) return;
    const std::int32_t skip = c_.percent(80) ? *x : pick_partner(*y).value_or(*x);
    const auto sum = try_add(op_step(OpKind::Add, c_.percent(50) ? std::vector{*y, skip} : std::vector{skip, *y}));
    if (sum && c_.percent(70)) activation_step(*sum);
  }

  // A conv whose output has two readers, or is an output and read: nothing may fuse into it.
  void conv_read_twice() {
    const auto x = pick_rank(4);
    if (!x) return;
    const auto y = shape_keeping_conv(*x, c_.percent(50));
    if (!y) return;
    const auto a = activation_step(*y);
    if (!a) return;
    if (c_.percent(30)) recipe_.steps[static_cast<std::size_t>(*y)].outputs = 1;
    else if (shape(*a) == shape(*y)) try_add(op_step(c_.pick({OpKind::Add, OpKind::Mul}), {*a, *y}));
  }

  void gemm_bias_activation() {
    auto x = pick_rank(2);
    if (!x || c_.percent(30)) {
      const auto spatial = pick_rank(4);
      if (!spatial) return;
      x = c_.percent(50) ? try_add(op_step(OpKind::GlobalAvgPool, {*spatial}, GlobalPoolParams{layout(*spatial)}))
                         : spatial;
      if (x) x = try_add(op_step(OpKind::Reshape, {*x}, ReshapeParams{{0, -1}}));
    }
    if (!x) return;
    Step s = op_step(OpKind::Gemm, {*x});
    GemmParams p{.trans_a = c_.percent(10), .trans_b = c_.percent(30)};
    if (c_.percent(15)) p.alpha = 0.5f, p.beta = 2.0f;
    const bool fused = c_.percent(15);
    if (fused) p.activation = activation();
    s.params = p;
    s.width = c_.pick<std::int64_t>({1, 3, 8, 16, 24});
    s.constant = c_.pick({ConstantShape::None, ConstantShape::Scalar, ConstantShape::LastDim, ConstantShape::LastDim,
                          ConstantShape::Full});
    const auto y = try_add(std::move(s));
    if (y && !fused && c_.percent(70)) activation_step(*y);
  }

  void silu_pattern() {
    if (const auto x = pick_any()) spelt_silu(*x);
  }

  void unary(std::int32_t x) {
    if (c_.percent(60)) {
      activation_step(x);
      return;
    }
    const float lo = c_.pick({-1.0f, -0.25f, 0.0f}), hi = c_.pick({0.5f, 1.0f, 6.0f});
    try_add(op_step(OpKind::Clip, {x}, ClipParams{lo, hi}));
  }

  // x op y with y another tensor (of x's shape or one that broadcasts to it, e.g. a squeeze-excite
  // scale from a global pool), a new input, or a constant; a division only by a constant away from 0.
  void binary() {
    const auto x = pick_any();
    if (!x) return;
    const OpKind op = c_.pick({OpKind::Add, OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Mul, OpKind::Div});
    const std::uint32_t other = c_.below(10);
    if (op == OpKind::Div || other < 4) {
      Step s = op_step(op, {*x});
      s.constant = c_.pick({ConstantShape::Scalar, ConstantShape::PerChannel, ConstantShape::LastDim,
                            ConstantShape::Full});
      try_add(std::move(s));
      return;
    }
    std::optional<std::int32_t> y;
    if (other < 6) {
      Step input;
      input.input = true;
      input.shape = shape(*x);
      input.dtype = dtype(*x);
      y = try_add(std::move(input), layout(*x));
    } else {
      y = pick_partner(*x);
    }
    if (y) try_add(op_step(op, c_.percent(50) ? std::vector{*x, *y} : std::vector{*y, *x}));
  }

  void pool() {
    const auto x = pick_rank(4);
    if (!x) return;
    Pool2dParams p{.layout = layout(*x)};
    const std::int64_t k = c_.pick<std::int64_t>({2, 3});
    p.kernel = {k, k};
    for (auto& stride : p.stride) stride = c_.pick<std::int64_t>({1, 2, 2});
    if (c_.percent(30)) p.pad = {1, 1, 1, 1};
    p.ceil_mode = c_.percent(20);
    p.count_include_pad = c_.percent(30);
    try_add(op_step(c_.pick({OpKind::MaxPool2d, OpKind::AvgPool2d}), {*x}, p));
  }

  // Along the channels mostly; its inputs agree on every other dimension.
  void concat() {
    const auto x = pick([&](std::int32_t i) { return rank(i) >= 2; });
    if (!x) return;
    const auto r = static_cast<std::int64_t>(rank(*x));
    const std::int64_t axis = c_.percent(75) ? (r == 4 && layout(*x) == Layout::NHWC ? 3 : 1)
                                             : static_cast<std::int64_t>(c_.below(static_cast<std::uint32_t>(r)));
    const auto fits = [&](std::int32_t i) {
      if (rank(i) != rank(*x) || dtype(i) != dtype(*x)) return false;
      for (std::int64_t d = 0; d < r; ++d)
        if (d != axis && shape(i)[static_cast<std::size_t>(d)] != shape(*x)[static_cast<std::size_t>(d)]) return false;
      return true;
    };
    std::vector<std::int32_t> xs{*x};
    for (int i = c_.percent(70) ? 1 : 2; i-- > 0;)
      if (const auto y = pick(fits)) xs.insert(xs.begin() + c_.below(static_cast<std::uint32_t>(xs.size() + 1)), *y);
    try_add(op_step(OpKind::Concat, std::move(xs), ConcatParams{axis}));
  }

  void cast() {
    if (const auto x = pick_any()) {
      const DType to = c_.pick({DType::f32, DType::f16, DType::bf16});
      if (to != dtype(*x)) try_add(op_step(OpKind::Cast, {*x}, CastParams{to}));
    }
  }

  // Flattens a 4-D tensor for a gemm, or makes a 2-D one [N, F, 1, 1] for a 1x1 conv.
  void reshape() {
    const auto x = pick([&](std::int32_t i) { return rank(i) == 2 || rank(i) == 4; });
    if (!x) return;
    if (rank(*x) == 4) try_add(op_step(OpKind::Reshape, {*x}, ReshapeParams{{0, -1}}));
    else try_add(op_step(OpKind::Reshape, {*x}, ReshapeParams{{0, -1, 1, 1}}), Layout::NCHW);
  }

  // Between NCHW and NHWC, which the layout pass must see through; 2-D tensors swap their dimensions.
  void transpose() {
    const auto x = pick([&](std::int32_t i) { return rank(i) == 2 || rank(i) == 4; });
    if (!x) return;
    if (rank(*x) == 2) try_add(op_step(OpKind::Transpose, {*x}, TransposeParams{{1, 0}}));
    else in_layout(*x, layout(*x) == Layout::NCHW ? Layout::NHWC : Layout::NCHW);
  }

  // x in layout `want`: itself, or a transpose of it.
  std::optional<std::int32_t> in_layout(std::int32_t x, Layout want) {
    if (layout(x) == want) return x;
    const std::vector<std::int64_t> perm = want == Layout::NHWC ? std::vector<std::int64_t>{0, 2, 3, 1}
                                                                : std::vector<std::int64_t>{0, 3, 1, 2};
    return try_add(op_step(OpKind::Transpose, {x}, TransposeParams{perm}), want);
  }

  // A slice of one axis (forwards or backwards, now and then with a step of 2), a pad of the last
  // two dims in any mode, or an expand of the size-1 dims to 2.
  void slice_pad_expand() {
    const auto x = pick_any();
    if (!x) return;
    const Shape& sx = shape(*x);
    const auto r = static_cast<std::int64_t>(sx.size());
    const std::uint32_t kind = c_.below(3);
    if (kind == 0) {
      const std::int64_t axis = static_cast<std::int64_t>(c_.below(static_cast<std::uint32_t>(r)));
      const std::int64_t dim = sx[static_cast<std::size_t>(axis)];
      const std::int64_t step = c_.pick<std::int64_t>({1, 1, 2, -1, -2});
      const std::int64_t start = static_cast<std::int64_t>(c_.below(static_cast<std::uint32_t>(dim)));
      const std::int64_t end = step > 0 ? std::numeric_limits<std::int64_t>::max() : -dim - 1;
      try_add(op_step(OpKind::Slice, {*x}, SliceParams{{start}, {end}, {axis}, {step}}));
    } else if (kind == 1) {
      std::vector<std::int64_t> pads(2 * sx.size(), 0);
      for (std::int64_t d = std::max<std::int64_t>(0, r - 2); d < r; ++d) {
        pads[static_cast<std::size_t>(d)] = c_.below(3);
        pads[static_cast<std::size_t>(r + d)] = c_.below(3);
      }
      const PadMode mode = c_.pick({PadMode::Constant, PadMode::Reflect, PadMode::Edge});
      try_add(op_step(OpKind::Pad, {*x}, PadParams{pads, mode, c_.percent(50) ? 0.0f : 0.5f}));
    } else {
      Shape to = sx;
      for (auto& d : to) d = d == 1 ? 2 : d;
      try_add(op_step(OpKind::Expand, {*x}, ExpandParams{to}));
    }
  }

  // A backward op or the fused loss: an activation's gradient with x itself or a tensor of its shape as
  // dy, a max pool's gradient with its own output as dy, or cross-entropy against x's softmax.
  void backward() {
    const std::uint32_t kind = c_.below(3);
    const auto x = kind == 1 ? pick_rank(4) : pick_any();
    if (!x) return;
    if (kind == 0) {
      const auto dy = pick([&](std::int32_t i) { return dtype(i) == dtype(*x) && shape(i) == shape(*x); });
      ActivationBackwardParams p{.activation = c_.pick({OpKind::Relu, OpKind::Clip, OpKind::Gelu, OpKind::HardSigmoid,
                                                        OpKind::HardSwish})};
      p.clip = {-0.5f, 1.0f};
      p.gelu.tanh_approximation = c_.percent(50);
      try_add(op_step(OpKind::ActivationBackward, {*x, dy.value_or(*x)}, p));
    } else if (kind == 1) {
      Pool2dParams p{.layout = layout(*x)};
      p.kernel = {3, 3};
      p.stride = {c_.pick<std::int64_t>({1, 2}), 2};
      if (c_.percent(30)) p.pad = {1, 1, 1, 1};
      if (const auto y = try_add(op_step(OpKind::MaxPool2d, {*x}, p)))
        try_add(op_step(OpKind::MaxPool2dBackward, {*x, *y}, p));
    } else if (kind == 2) {
      if (const auto labels = try_add(op_step(OpKind::Softmax, {*x}, SoftmaxParams{-1})))
        try_add(op_step(OpKind::SoftmaxCrossEntropy, {*x, *labels}));
    }
  }

  // By constant weights, or x by its own transpose.
  void matmul() {
    const auto x = pick([&](std::int32_t i) { return rank(i) >= 2; });
    if (!x) return;
    if (c_.percent(30)) {
      try_add(op_step(OpKind::MatMul, {*x, *x}, MatMulParams{.trans_b = true}));
      return;
    }
    Step s = op_step(OpKind::MatMul, {*x}, MatMulParams{.trans_b = c_.percent(30)});
    s.constant = ConstantShape::Full;
    s.width = c_.pick<std::int64_t>({1, 4, 8, 16});
    try_add(std::move(s));
  }

  // Every result nothing reads is an output; so are a few that are read (they must stay materialised
  // whatever fuses around them), now and then under two names.
  void mark_outputs() {
    std::vector<bool> read(recipe_.steps.size(), false);
    for (const Step& s : recipe_.steps)
      for (const std::int32_t i : s.operands) read[static_cast<std::size_t>(i)] = true;
    for (std::size_t i = 0; i < recipe_.steps.size(); ++i) {
      Step& s = recipe_.steps[i];
      if (!read[i] && !s.input) s.outputs = std::max(s.outputs, 1);
      else if (c_.percent(s.input ? 2 : 10)) s.outputs = std::max(s.outputs, 1);
      if (s.outputs > 0 && c_.percent(3)) s.outputs = 2;
    }
    if (std::none_of(recipe_.steps.begin(), recipe_.steps.end(), [](const Step& s) { return s.outputs > 0; }))
      recipe_.steps.back().outputs = 1;
  }

  Choices& c_;
  GenerateLimits limits_;
  Recipe recipe_;
  StepBuilder scratch_;
  std::vector<Layout> layouts_;  // per step: the layout a 4-D result is in
  std::uint64_t constants_seed_ = 0;
  int ops_ = 0;
};

}  // namespace

std::uint32_t SeededChoices::below(std::uint32_t n) { return static_cast<std::uint32_t>(splitmix64(state_) % n); }

std::uint32_t ByteChoices::below(std::uint32_t n) {
  std::uint32_t value = 0;
  for (std::uint64_t reach = 1; reach < n; reach <<= 8)
    value = (value << 8) | (next_ < bytes_.size() ? bytes_[next_++] : 0u);
  return value % n;
}

Recipe generate(Choices& choices, const GenerateLimits& limits) { return Generator(choices, limits).run(); }

std::optional<Built> build(const Recipe& recipe) {
  StepBuilder b;
  try {
    for (const Step& s : recipe.steps) b.add(s);
  } catch (const Error&) {
    return std::nullopt;
  }
  std::size_t outputs = 0;
  for (std::size_t i = 0; i < recipe.steps.size(); ++i)
    for (int k = 0; k < recipe.steps[i].outputs; ++k) b.g.output(numbered('y', outputs++), b.values[i]);
  return Built{std::move(b.g), std::move(b.values)};
}

std::size_t op_count(const Recipe& recipe) {
  return static_cast<std::size_t>(
      std::count_if(recipe.steps.begin(), recipe.steps.end(), [](const Step& s) { return !s.input; }));
}

}  // namespace porta::graph_gen
