// oneDNN's backward primitives beside porta's gradient graphs (backward.hpp). porta-bench calls
// oneDNN directly here, as a framework training with it would: porta's vendor provider runs graph
// ops, and a graph has no backward-convolution op to give it. Activations are given in porta's
// layout (NHWC or NCHW) and read in place; the weights and their gradient go to and from the layout the
// primitive chooses by a reorder on every run, counted in its time, as the forward vendor conv does.
#include "backward.hpp"

#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#if PORTA_BENCH_ONEDNN
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace porta::bench {
namespace {

std::string unsupported_reason(const Problem& problem, const Target& target) {
  if (target.backend != "cpu") return "oneDNN's backward primitives stand beside cpu devices only";
  if (problem.dtype != DType::f32) return "the oneDNN backward rows are f32 only";
#if PORTA_BENCH_ONEDNN
  return {};
#else
  return "this porta-bench does not link oneDNN (not found, Debian: libdnnl-dev; or a PORTA_BACKEND_MODULES build, "
         "whose porta-bench links no vendor library), so it has no backward primitives to run";
#endif
}

#if PORTA_BENCH_ONEDNN
using dnnl::memory;
using tag = memory::format_tag;
constexpr auto f32 = memory::data_type::f32;

const dnnl::engine& engine() {
  static const dnnl::engine cpu(dnnl::engine::kind::cpu, 0);
  return cpu;
}

// The inputs' values (those set_random_inputs gives porta's run of the graph), by name, and the output.
struct Operands {
  std::map<std::string, std::vector<float>> values;
  std::vector<float> out;

  memory user(const memory::desc& desc, const std::string& name) {
    return memory(desc, engine(), name.empty() ? out.data() : values.at(name).data());
  }
};

// One run: the primitive and its arguments, with the reorders into and out of its weights' layout.
struct Step {
  std::vector<std::pair<dnnl::primitive, std::unordered_map<int, memory>>> calls;

  void reorder(const memory& from, const memory& to) {
    if (from != to) calls.push_back({dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}});
  }
};

// `user` itself when the primitive wants its layout, else a buffer in the one it wants.
memory as_wanted(const memory& user, const memory::desc& wanted) {
  return user.get_desc() == wanted ? user : memory(wanted, engine());
}

Step conv_step(const cases::ConvProblem& p, const Json& params, bool data, Operands& ops, std::string& algo) {
  const Conv2dParams& c = p.params;
  const std::int64_t g = c.groups, out_h = params["p"], out_w = params["q"];
  const tag activations = c.layout == Layout::NHWC ? tag::nhwc : tag::nchw;
  const memory::desc x({p.n, p.c, p.h, p.w}, f32, activations), y({p.n, p.k, out_h, out_w}, f32, activations);
  const memory::desc w = g == 1 ? memory::desc({p.k, p.c, p.r, p.s}, f32, tag::oihw)
                                : memory::desc({g, p.k / g, p.c / g, p.r, p.s}, f32, tag::goihw);
  const memory::desc w_any(w.dims(), f32, tag::any);
  const memory::dims strides{c.stride[0], c.stride[1]}, dilates{c.dilation[0] - 1, c.dilation[1] - 1},
      pad_l{c.pad[0], c.pad[1]}, pad_r{c.pad[2], c.pad[3]};
  const auto algorithm = dnnl::algorithm::convolution_direct;
  const dnnl::convolution_forward::primitive_desc hint(
      {dnnl::prop_kind::forward_training, algorithm, x, w_any, y, strides, dilates, pad_l, pad_r}, engine());
  Step step;
  const memory w_user = ops.user(w, data ? "w" : "");
  if (data) {
    const dnnl::convolution_backward_data::primitive_desc pd(
        {algorithm, x, w_any, y, strides, dilates, pad_l, pad_r}, engine(), hint);
    const memory weights = as_wanted(w_user, pd.weights_desc());
    step.reorder(w_user, weights);
    step.calls.push_back({dnnl::convolution_backward_data(pd), {{DNNL_ARG_DIFF_DST, ops.user(y, "dy")},
                                                                {DNNL_ARG_WEIGHTS, weights},
                                                                {DNNL_ARG_DIFF_SRC, ops.user(x, "")}}});
    algo = std::string("onednn convolution_backward_data ") + pd.impl_info_str();
  } else {
    const dnnl::convolution_backward_weights::primitive_desc pd(
        {algorithm, x, w_any, y, strides, dilates, pad_l, pad_r}, engine(), hint);
    const memory diff_weights = as_wanted(w_user, pd.diff_weights_desc());
    step.calls.push_back({dnnl::convolution_backward_weights(pd), {{DNNL_ARG_SRC, ops.user(x, "x")},
                                                                   {DNNL_ARG_DIFF_DST, ops.user(y, "dy")},
                                                                   {DNNL_ARG_DIFF_WEIGHTS, diff_weights}}});
    step.reorder(diff_weights, w_user);
    algo = std::string("onednn convolution_backward_weights ") + pd.impl_info_str();
  }
  if (step.calls.size() > 1) algo += " (weights reordered)";
  return step;
}

// c = a·op(b), a [m, k] and b [k, n] or, transposed, [n, k]: da = dc·op(b)ᵀ, db = aᵀ·dc (or dcᵀ·a).
// A transpose is a memory descriptor with the strides swapped (format tag ba), as oneDNN's matmul takes it.
Step gemm_step(const cases::GemmProblem& p, bool data, Operands& ops, std::string& algo) {
  const auto matrix = [](std::int64_t rows, std::int64_t cols, bool transposed) {
    return memory::desc({rows, cols}, f32, transposed ? tag::ba : tag::ab);
  };
  memory src, weights, dst;
  if (data) {
    src = ops.user(matrix(p.m, p.n, false), "dc");
    weights = ops.user(matrix(p.n, p.k, !p.trans_b), "b");
    dst = ops.user(matrix(p.m, p.k, false), "");
  } else if (p.trans_b) {
    src = ops.user(matrix(p.n, p.m, true), "dc");
    weights = ops.user(matrix(p.m, p.k, false), "a");
    dst = ops.user(matrix(p.n, p.k, false), "");
  } else {
    src = ops.user(matrix(p.k, p.m, true), "a");
    weights = ops.user(matrix(p.m, p.n, false), "dc");
    dst = ops.user(matrix(p.k, p.n, false), "");
  }
  const dnnl::matmul::primitive_desc pd({src.get_desc(), weights.get_desc(), dst.get_desc()}, engine());
  algo = std::string("onednn matmul ") + pd.impl_info_str();
  Step step;
  step.calls.push_back({dnnl::matmul(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}}});
  return step;
}
#endif

}  // namespace

Prepared prepare_onednn_backward(const Problem& problem, const Target& target, const RunSettings& settings) {
  Prepared p = outside_run(problem, target, settings, unsupported_reason(problem, target));
  if (p.row.status != "ok") return p;
#if PORTA_BENCH_ONEDNN
  try {
    auto ops = std::make_shared<Operands>();
    const Graph& graph = problem.graph;
    for (std::size_t i = 0; i < graph.inputs().size(); ++i)
      ops->values[graph.info(graph.inputs()[i]).name] = cases::random_input_values(graph, i, settings.seed);
    ops->out.resize(static_cast<std::size_t>(graph.desc(graph.outputs().front().second).numel()));
    const bool data = problem.params["gradient"] == "data";
    // Debian's oneDNN threads with OpenMP, and a primitive keeps the thread count it was made under.
    const int threads = target.device->info().threads;
    omp_set_num_threads(threads);
    const double start = steady_seconds();
    auto step = std::make_shared<Step>(problem.kind == OpKind::Conv2d
                                           ? conv_step(conv_problem_of(problem.params), problem.params, data, *ops,
                                                       p.row.algo)
                                           : gemm_step(gemm_problem_of(problem.params), data, *ops, p.row.algo));
    p.row.compile_s = steady_seconds() - start;
    const auto run = [ops, step, threads] {
      omp_set_num_threads(threads);  // rows of other devices run between this row's samples
      dnnl::stream stream(engine());
      for (auto& [primitive, args] : step->calls) primitive.execute(stream, args);
      stream.wait();
      return std::optional<double>{};
    };
    run();
    p.row.first_run_s = steady_seconds() - start;
    p.sample = run;
    p.verify = [&problem, ops, settings](Row& row) { verify_host_output(row, problem, ops->out, settings); };
  } catch (const dnnl::error& e) {
    p.row.status = "unsupported";
    p.row.reason = std::string("oneDNN has no backward primitive for this case on this CPU (") + e.what() + ")";
  }
#endif
  return p;
}

}  // namespace porta::bench
