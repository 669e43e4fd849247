#include "op_cases/op_cases.hpp"

#include "op_cases/case_graph.hpp"
#include "op_cases/verify.hpp"

namespace porta::cases {

std::vector<OpCase> all_cases() {
  using Family = void (*)(std::vector<OpCase>&, DType);
  constexpr Family families[] = {detail::add_matmul_cases,    detail::add_gemm_cases,  detail::add_conv2d_cases,
                                 detail::add_binary_cases,    detail::add_unary_cases, detail::add_batchnorm_cases,
                                 detail::add_pool_cases,      detail::add_softmax_cases, detail::add_shape_cases,
                                 detail::add_cast_cases,      detail::add_reduce_cases,
                                 detail::add_norm_cases,      detail::add_slice_pad_cases,
                                 detail::add_backward_cases,  detail::add_attention_cases,
                                 detail::add_dropout_cases};
  // The ops that take integer and bool tensors, in those dtypes too.
  constexpr Family any_dtype_families[] = {detail::add_shape_cases, detail::add_cast_cases,
                                           detail::add_slice_pad_cases, detail::add_index_cases};
  std::vector<OpCase> list;
  for (const Family family : families)
    for (const DType t : all_dtypes) family(list, t);
  for (const Family family : any_dtype_families)
    for (const DType t : integer_dtypes) family(list, t);
  for (const DType t : all_dtypes) detail::add_index_cases(list, t);
  return list;
}

Graph gemm_graph(const GemmProblem& p) {
  Graph g;
  const Shape a = p.trans_a ? Shape{p.k, p.m} : Shape{p.m, p.k};
  const Shape b = p.trans_b ? Shape{p.n, p.k} : Shape{p.k, p.n};
  if (p.batch == 1) {
    const GemmParams params{.trans_a = p.trans_a, .trans_b = p.trans_b};
    g.output("c", g.gemm(g.input("a", a, p.dtype), g.input("b", b, p.dtype), params));
    return g;
  }
  // Batched problems are a batched MatMul: Gemm is 2-D only.
  Shape ba{p.batch}, bb{p.batch};
  ba.insert(ba.end(), a.begin(), a.end());
  bb.insert(bb.end(), b.begin(), b.end());
  const MatMulParams params{.trans_a = p.trans_a, .trans_b = p.trans_b};
  g.output("c", g.matmul(g.input("a", ba, p.dtype), g.input("b", bb, p.dtype), params));
  return g;
}

double gemm_flops(const GemmProblem& p) {
  return 2.0 * static_cast<double>(p.batch) * static_cast<double>(p.m) * static_cast<double>(p.n) *
         static_cast<double>(p.k);
}

namespace {
Shape conv_input_shape(const ConvProblem& p) {
  return p.params.layout == Layout::NHWC ? Shape{p.n, p.h, p.w, p.c} : Shape{p.n, p.c, p.h, p.w};
}
Shape conv_weight_shape(const ConvProblem& p) { return {p.k, p.c / std::max<std::int64_t>(p.params.groups, 1), p.r, p.s}; }
}  // namespace

Graph conv_shape_graph(const ConvProblem& p) {
  Graph g;
  const Tensor x = g.input("x", conv_input_shape(p), p.dtype);
  g.output("y", g.conv2d(x, g.input("w", conv_weight_shape(p), p.dtype), p.params));
  return g;
}

Graph conv_graph(const ConvProblem& p, std::uint64_t seed) {
  conv_shape_graph(p);  // a bad problem is the builder's error, before its weights are counted or made
  Graph g;
  const Shape w = conv_weight_shape(p);
  std::int64_t count = 1;
  for (auto d : w) count *= d;
  const std::vector<float> values = random_values(static_cast<std::size_t>(count), seed, -1.0f, 1.0f);
  const Tensor x = g.input("x", conv_input_shape(p), p.dtype);
  const Tensor bias =
      p.bias ? g.constant("b", {p.k}, random_values(static_cast<std::size_t>(p.k), seed + 1, -1.0f, 1.0f), p.dtype)
             : Tensor{};
  g.output("y", g.conv2d(x, g.constant("w", w, values, p.dtype), p.params, bias));
  return g;
}

double conv_flops(const ConvProblem& p) {
  const auto& q = p.params;
  const auto out_h = static_cast<double>(window_output_size(p.h, p.r, q.stride[0], q.pad[0], q.pad[2], q.dilation[0]));
  const auto out_w = static_cast<double>(window_output_size(p.w, p.s, q.stride[1], q.pad[1], q.pad[3], q.dilation[1]));
  const double c_per_group = static_cast<double>(p.c) / static_cast<double>(std::max<std::int64_t>(q.groups, 1));
  return 2.0 * static_cast<double>(p.n) * static_cast<double>(p.k) * c_per_group * static_cast<double>(p.r) *
         static_cast<double>(p.s) * out_h * out_w;
}

}  // namespace porta::cases
