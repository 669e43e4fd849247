#include "backward.hpp"

#include <fmt/core.h>

#include "porta/autodiff.hpp"
#include "workload_csv.hpp"

namespace porta::bench {
namespace {

constexpr std::int64_t suite_batch = 8;  // a training batch that keeps a 2-core machine's run in minutes

// Adds the gradient of sum(y * dy) with respect to `wrt` as output `name`, dy a new input shaped as y.
void add_gradient(Graph& g, Tensor y, Tensor wrt, const std::string& name) {
  const Tensor dy = g.input(name == "da" || name == "db" ? "dc" : "dy", g.shape(y), g.dtype(y));
  const std::vector<Tensor> grads = autodiff::gradients(g, y, std::vector{wrt}, dy);
  g.output(name, grads.front());
}

Problem finished(Problem problem, Gradient gradient) {
  problem.params["gradient"] = gradient == Gradient::Data ? "data" : "filter";
  problem.bytes = minimum_bytes(problem.graph);
  return problem;
}

}  // namespace

Problem conv_backward_problem(const cases::ConvProblem& p, Gradient gradient, std::string workload) {
  if (p.bias || p.params.activation != Activation::None || p.params.residual)
    throw Error(ErrorCode::InvalidArgument, "a conv's backward problem is of the convolution alone: no bias, "
                                            "activation or residual");
  // The forward problem's row identity (label, params, FLOPs), then its graph replaced by the gradient's.
  Problem problem = conv_problem(p, 0, std::move(workload));
  Graph g;
  const Graph& forward = problem.graph;
  const Tensor x = g.input("x", forward.shape(forward.inputs().front()), p.dtype);
  const Tensor w = g.input("w", {p.k, p.c / std::max<std::int64_t>(p.params.groups, 1), p.r, p.s}, p.dtype);
  const Tensor y = g.conv2d(x, w, p.params);
  add_gradient(g, y, gradient == Gradient::Data ? x : w, gradient == Gradient::Data ? "dx" : "dw");
  problem.op = gradient == Gradient::Data ? "conv2d_backward_data" : "conv2d_backward_filter";
  problem.graph = std::move(g);
  return finished(std::move(problem), gradient);
}

Problem gemm_backward_problem(const cases::GemmProblem& p, Gradient gradient, std::string workload) {
  if (p.trans_a || p.batch != 1)
    throw Error(ErrorCode::InvalidArgument, "a GEMM's backward problem is of a linear layer: a not transposed, "
                                            "batch 1");
  Problem problem = gemm_problem(p, std::move(workload));
  Graph g;
  const Tensor a = g.input("a", {p.m, p.k}, p.dtype);
  const Tensor b = g.input("b", p.trans_b ? Shape{p.n, p.k} : Shape{p.k, p.n}, p.dtype);
  const Tensor c = g.gemm(a, b, {.trans_b = p.trans_b});
  add_gradient(g, c, gradient == Gradient::Data ? a : b, gradient == Gradient::Data ? "da" : "db");
  problem.op = gradient == Gradient::Data ? "gemm_backward_a" : "gemm_backward_b";
  problem.graph = std::move(g);
  return finished(std::move(problem), gradient);
}

bool is_backward(const Problem& problem) { return problem.params.contains("gradient"); }

cases::ConvProblem conv_problem_of(const Json& j) {
  cases::ConvProblem p{.n = j["n"], .c = j["c"], .h = j["h"], .w = j["w"], .k = j["k"], .r = j["r"], .s = j["s"]};
  p.params.stride = {j["stride_h"], j["stride_w"]};
  p.params.pad = {j["pad_top"], j["pad_left"], j["pad_bottom"], j["pad_right"]};
  p.params.dilation = {j["dilation_h"], j["dilation_w"]};
  p.params.groups = j["groups"];
  p.params.layout = j["layout"] == "NHWC" ? Layout::NHWC : Layout::NCHW;
  return p;
}

cases::GemmProblem gemm_problem_of(const Json& j) {
  return {.m = j["m"], .n = j["n"], .k = j["k"], .batch = j["batch"], .trans_a = j["trans_a"], .trans_b = j["trans_b"]};
}

std::vector<Problem> backward_problems() {
  std::vector<Problem> problems;
  const auto conv_layers = [&](std::string_view list, std::string_view family) {
    for (const WorkloadEntry& e : builtin_workload(list)) {
      cases::ConvProblem p = std::get<cases::ConvProblem>(e.problem);
      p.n = suite_batch;
      p.params.layout = Layout::NHWC;
      const std::string label = fmt::format("{}/{}/{}", family, e.label, conv_label(p));
      // The first layer's input is the images: training needs no data gradient there (and oneDNN's
      // for its 3 channels, NHWC, ran for minutes).
      for (const Gradient g : {Gradient::Data, Gradient::Filter})
        if (g == Gradient::Filter || p.c != 3) problems.push_back(conv_backward_problem(p, g, label));
    }
  };
  conv_layers("resnet50_conv", "resnet50");
  conv_layers("efficientnet_b0_depthwise", "efficientnet-b0");
  // nn.Linear's [out, in] weights (trans_b): BERT-base's at sequence 512, ResNet-50's classifier at the batch.
  const std::vector<std::pair<std::string, cases::GemmProblem>> linear{
      {"bert_base_s512/qkvo", {.m = 512, .n = 768, .k = 768, .trans_b = true}},
      {"bert_base_s512/ffn_up", {.m = 512, .n = 3072, .k = 768, .trans_b = true}},
      {"bert_base_s512/ffn_down", {.m = 512, .n = 768, .k = 3072, .trans_b = true}},
      {"resnet50/fc", {.m = suite_batch, .n = 1000, .k = 2048, .trans_b = true}}};
  for (const auto& [name, p] : linear)
    for (const Gradient g : {Gradient::Data, Gradient::Filter})
      problems.push_back(gemm_backward_problem(p, g, fmt::format("{}/{}", name, gemm_label(p))));
  return problems;
}

}  // namespace porta::bench
