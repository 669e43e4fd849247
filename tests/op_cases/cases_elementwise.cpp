// Elementwise cases: binary ops under every kind of numpy broadcast, every unary op and
// activation, clip, pow, batchnorm and every pair of dtypes for cast.
#include <span>
#include <string>

#include "op_cases/case_graph.hpp"

namespace porta::cases::detail {
namespace {

Tensor binary(CaseGraph& c, OpKind op, Tensor a, Tensor b) {
  static_assert(op_kind_count == 45, "a new OpKind: give it its case in this switch, then count it here");
  switch (op) {
    case OpKind::Add: return c.g.add(a, b);
    case OpKind::Sub: return c.g.sub(a, b);
    case OpKind::Mul: return c.g.mul(a, b);
    case OpKind::Pow: return c.g.pow(a, b);
    default: return c.g.div(a, b);
  }
}

struct Broadcast {
  std::string variant;
  Shape a, b;
  Shape a_strides = {};  // non-empty: a is a strided view
};

// x + offset, or x itself: moves the [-1, 1) inputs into an op's domain.
Tensor shifted(CaseGraph& c, Tensor x, float offset) { return offset == 0.0f ? x : c.g.add(x, c.scalar(offset)); }

}  // namespace

namespace {

// Constant exponents as ONNX graphs spell x^2 and sqrt: negative bases under integer exponents, and
// the edges of the domain (a zero base, a zero exponent).
void add_pow_cases(std::vector<OpCase>& list, DType t) {
  struct Exponent {
    std::string variant;
    float exponent, base_offset;
  };
  const Exponent exponents[] = {{"square_negative_base", 2.0f, 0.0f}, {"cube_negative_base", 3.0f, 0.0f},
                                {"inverse_negative_base", -1.0f, -1.5f}, {"half", 0.5f, 1.0f},
                                {"zero_exponent", 0.0f, 0.0f},          {"fractional_1.7", 1.7f, 1.5f}};
  for (const Exponent& e : exponents)
    add_case(list, OpKind::Pow, e.variant, t, [e](CaseGraph& c) {
      return c.g.pow(shifted(c, c.input({7, 19}), e.base_offset), c.scalar(e.exponent));
    });
  add_case(list, OpKind::Pow, "scalar_base", t,
           [](CaseGraph& c) { return c.g.pow(c.scalar(2.0f), c.scaled(c.input({5, 7}), 4.0f)); });
}

}  // namespace

void add_binary_cases(std::vector<OpCase>& list, DType t) {
  const std::vector<Broadcast> shapes = {
      {"same_1", {1}, {1}},
      {"same_3x17", {3, 17}, {3, 17}},
      {"same_129x127", {129, 127}, {129, 127}},
      {"large_300x257_row", {300, 257}, {257}},  // enough elements to be split across threads
      {"scalar_rhs", {5, 7}, {1}},
      {"scalar_lhs", {1}, {5, 7}},
      {"scalar_rhs_large_300x257", {300, 257}, {1}},  // the single-value path split across threads
      {"scalar_lhs_large_300x257", {1, 1}, {300, 257}},
      {"scalar_rhs_higher_rank", {7}, {1, 1, 1}},  // the result takes the scalar's rank, same elements
      {"scalar_rhs_transposed_view", {6, 4}, {1}, {1, 6}},
      {"row", {5, 7}, {7}},
      {"row_2d", {5, 7}, {1, 7}},
      {"column", {5, 7}, {5, 1}},
      {"outer", {5, 1}, {1, 7}},
      {"size1_dims_4d", {2, 1, 3, 1}, {1, 4, 1, 5}},
      {"rank_mismatch", {4, 3, 5}, {5}},
      {"channel_bias_nchw", {2, 3, 4, 5}, {3, 1, 1}},
      // Channels-last gates, read row by row on the cpu backend: on either side, rows that fill
      // a chunk unevenly, and rows too long for one chunk.
      {"gate_nhwc", {2, 3, 4, 5}, {2, 1, 1, 5}},
      {"gate_nhwc_lhs", {2, 1, 1, 5}, {2, 3, 4, 5}},
      {"gate_nhwc_c700", {1, 4, 3, 700}, {1, 1, 1, 700}},
      {"gate_row_c2100", {3, 2100}, {2100}},
      {"transposed_view", {6, 4}, {6, 4}, {1, 6}},
      {"sliced_view", {3, 5}, {1, 5}, {16, 2}},
  };
  for (const OpKind op : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Pow}) {
    for (const Broadcast& s : shapes)
      add_case(list, op, s.variant, t, [op, s](CaseGraph& c) {
        Tensor a = c.input(s.a, s.a_strides);
        // Denominators are constants in +-[0.5, 1.5): the quotient stays well conditioned. Powers
        // take bases in [0.5, 2.5) and exponents in [-3, 3).
        if (op == OpKind::Pow) return c.g.pow(shifted(c, a, 1.5f), c.scaled(c.input(s.b), 3.0f));
        const Tensor b = op == OpKind::Div ? c.away_from_zero(s.b) : c.input(s.b);
        return binary(c, op, a, b);
      });
    add_case(list, op, "const_lhs", t, [op](CaseGraph& c) {
      const Tensor b = op == OpKind::Div ? c.g.add(c.input({4, 9}), c.scalar(2.5f)) : c.input({4, 9});
      return binary(c, op, op == OpKind::Pow ? c.weights({9}, 0.5f, 2.5f) : c.weights({9}), b);  // positive bases
    });
  }
  // A denominator that is a graph input, kept in [1.5, 3.5) by an offset.
  add_case(list, OpKind::Div, "input_denominator", t,
           [](CaseGraph& c) { return c.g.div(c.input({3, 17}), c.g.add(c.input({17}), c.scalar(2.5f))); });
  add_pow_cases(list, t);
}

void add_unary_cases(std::vector<OpCase>& list, DType t) {
  struct Unary {
    OpKind op;
    std::string variant;
    Tensor (*apply)(Graph&, Tensor);
    float offset = 0.0f;  // added to the inputs, to keep them in the op's domain
  };
  const Unary unaries[] = {
      {OpKind::Relu, "", [](Graph& g, Tensor x) { return g.relu(x); }},
      {OpKind::Clip, "relu6_", [](Graph& g, Tensor x) { return g.relu6(x); }},
      {OpKind::Clip, "range_", [](Graph& g, Tensor x) { return g.clip(x, -0.75f, 2.5f); }},
      {OpKind::Clip, "min_eq_max_", [](Graph& g, Tensor x) { return g.clip(x, 0.25f, 0.25f); }},
      {OpKind::Sigmoid, "", [](Graph& g, Tensor x) { return g.sigmoid(x); }},
      {OpKind::Silu, "", [](Graph& g, Tensor x) { return g.silu(x); }},
      {OpKind::Tanh, "", [](Graph& g, Tensor x) { return g.tanh(x); }},
      {OpKind::Gelu, "exact_", [](Graph& g, Tensor x) { return g.gelu(x); }},
      {OpKind::Gelu, "tanh_", [](Graph& g, Tensor x) { return g.gelu(x, {.tanh_approximation = true}); }},
      {OpKind::Erf, "", [](Graph& g, Tensor x) { return g.erf(x); }},
      {OpKind::Sqrt, "", [](Graph& g, Tensor x) { return g.sqrt(x); }, 1.0f},  // [0, 2), zero included
      {OpKind::Reciprocal, "", [](Graph& g, Tensor x) { return g.reciprocal(x); }, 1.5f},
      {OpKind::Reciprocal, "negative_", [](Graph& g, Tensor x) { return g.reciprocal(x); }, -1.5f},
      {OpKind::HardSigmoid, "", [](Graph& g, Tensor x) { return g.hard_sigmoid(x); }},
      {OpKind::HardSigmoid, "alpha_0.3_beta_0.4_",
       [](Graph& g, Tensor x) { return g.hard_sigmoid(x, {.alpha = 0.3f, .beta = 0.4f}); }},
      {OpKind::HardSigmoid, "alpha_-1.5_beta_0_",
       [](Graph& g, Tensor x) { return g.hard_sigmoid(x, {.alpha = -1.5f, .beta = 0.0f}); }},
      {OpKind::HardSwish, "", [](Graph& g, Tensor x) { return g.hard_swish(x); }},
  };
  struct Input {
    std::string variant;
    Shape shape;
    Shape strides = {};
  };
  const Input inputs[] = {{"1", {1}},           {"129", {129}},       {"3x17", {3, 17}},
                          {"2x3x5x7", {2, 3, 5, 7}}, {"large_70001", {70001}}, {"transposed_view", {5, 3}, {1, 5}}};
  for (const Unary& u : unaries) {
    for (const Input& in : inputs)
      add_case(list, u.op, u.variant + in.variant, t,
               [u, in](CaseGraph& c) { return u.apply(c.g, shifted(c, c.input(in.shape, in.strides), u.offset)); });
    // [-8, 8) (before the offset, scaled too): reaches relu6's upper bound, sigmoid/tanh/erf
    // saturation, gelu's tails and both ends of the hard sigmoid's ramp.
    add_case(list, u.op, u.variant + "wide_range", t,
             [u](CaseGraph& c) { return u.apply(c.g, c.scaled(shifted(c, c.input({7, 19}), u.offset), 8.0f)); });
  }
}

void add_batchnorm_cases(std::vector<OpCase>& list, DType t) {
  struct Bn {
    std::string variant;
    Shape x;
    float epsilon = 1e-5f;
  };
  const Bn cases[] = {{"nchw_2x3x5x7", {2, 3, 5, 7}},       {"rank2_1x4", {1, 4}},
                      {"rank3_2x5x9", {2, 5, 9}},           {"channels17_1x1", {1, 17, 1, 1}},
                      {"epsilon_1e-3", {1, 3, 4, 4}, 1e-3f}, {"epsilon_0", {1, 3, 4, 4}, 0.0f}};
  for (const Bn& bn : cases)
    add_case(list, OpKind::BatchNorm, bn.variant, t, [bn](CaseGraph& c) {
      const Shape ch{bn.x[1]};
      const Tensor x = c.input(bn.x);
      const Tensor scale = c.weights(ch), bias = c.weights(ch), mean = c.weights(ch);
      const Tensor var = c.away_from_zero(ch, true);  // variances in [0.5, 1.5)
      return c.g.batchnorm(x, scale, bias, mean, var, {.epsilon = bn.epsilon});
    });
}

void add_cast_cases(std::vector<OpCase>& list, DType to) {
  // The case dtype is the target; every source dtype is tried, the identity included.
  for (const auto& sources : {std::span<const DType>(all_dtypes), std::span<const DType>(integer_dtypes)})
    for (const DType from : sources) {
      const std::string prefix = "from_" + std::string(to_string(from));
      add_case(list, OpKind::Cast, prefix, to, [from, to](CaseGraph& c) {
        return c.g.cast(is_float(from) ? c.input_as(from, {3, 17}) : c.spread_input(from, {3, 17}, 8.0f), to);
      });
      // Values up to 1000 exercise rounding at larger exponents; x * 1024 is exact in every dtype.
      add_case(list, OpKind::Cast, prefix + "_wide_range", to,
               [from, to](CaseGraph& c) { return c.g.cast(c.spread_input(from, {40001}, 1024.0f), to); });
    }
}

}  // namespace porta::cases::detail
