// libporta-bench-onednn.so: oneDNN's backward primitives for porta-bench's `backward` suite. The only
// file that calls oneDNN; porta-bench loads it at run time (bench/onednn_backward.cpp), so porta-bench's
// own code never needs libdnnl. oneDNN is called directly, as a framework training with it would:
// porta's vendor provider runs graph ops, and a graph has no backward-convolution op to give it.
// Activations are given in porta's layout (NHWC or NCHW) and read in place; the weights and their
// gradient go to and from the layout the primitive chooses by a reorder on every run, counted in
// its time, as the forward vendor conv does.
#include <omp.h>

#include <cstdio>
#include <exception>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "onednn_backward.hpp"

namespace porta::bench {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
constexpr auto f32 = memory::data_type::f32;

const dnnl::engine& engine() {
  static const dnnl::engine cpu(dnnl::engine::kind::cpu, 0);
  return cpu;
}

// porta-bench's buffer as a oneDNN memory; the inputs' are only read.
memory user(const memory::desc& desc, const float* data) { return memory(desc, engine(), const_cast<float*>(data)); }

// `user` itself when the primitive wants its layout, else a buffer in the one it wants.
memory as_wanted(const memory& user, const memory::desc& wanted) {
  return user.get_desc() == wanted ? user : memory(wanted, engine());
}

class Call final : public OnednnCall {
 public:
  // Debian's oneDNN threads with OpenMP, and a primitive keeps the thread count it was made under.
  explicit Call(const OnednnProblem& problem) : threads_(problem.threads) {
    omp_set_num_threads(threads_);
    if (problem.op == OnednnProblem::Op::Conv2d) {
      conv(problem.conv, problem.data, problem.out);
    } else {
      gemm(problem.gemm, problem.data, problem.out);
    }
  }

  std::string algo() const override { return algo_; }

  std::string run() override {
    try {
      omp_set_num_threads(threads_);  // rows of other devices run between this row's samples
      dnnl::stream stream(engine());
      for (auto& [primitive, args] : calls_) primitive.execute(stream, args);
      stream.wait();
      return {};
    } catch (const std::exception& e) {
      return e.what();
    }
  }

 private:
  void reorder(const memory& from, const memory& to) {
    if (from != to) calls_.push_back({dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}});
  }

  void conv(const OnednnProblem::Conv& c, bool data, float* out) {
    const std::int64_t g = c.groups;
    const tag activations = c.nhwc ? tag::nhwc : tag::nchw;
    const memory::desc x({c.n, c.c, c.h, c.w}, f32, activations), y({c.n, c.k, c.p, c.q}, f32, activations);
    const memory::desc w = g == 1 ? memory::desc({c.k, c.c, c.r, c.s}, f32, tag::oihw)
                                  : memory::desc({g, c.k / g, c.c / g, c.r, c.s}, f32, tag::goihw);
    const memory::desc w_any(w.dims(), f32, tag::any);
    const memory::dims strides{c.stride[0], c.stride[1]}, dilates{c.dilation[0] - 1, c.dilation[1] - 1},
        pad_l{c.pad[0], c.pad[1]}, pad_r{c.pad[2], c.pad[3]};
    const auto algorithm = dnnl::algorithm::convolution_direct;
    const dnnl::convolution_forward::primitive_desc hint(
        {dnnl::prop_kind::forward_training, algorithm, x, w_any, y, strides, dilates, pad_l, pad_r}, engine());
    const memory w_user = user(w, data ? c.weights : out);
    if (data) {
      const dnnl::convolution_backward_data::primitive_desc pd(
          {algorithm, x, w_any, y, strides, dilates, pad_l, pad_r}, engine(), hint);
      const memory weights = as_wanted(w_user, pd.weights_desc());
      reorder(w_user, weights);
      calls_.push_back({dnnl::convolution_backward_data(pd), {{DNNL_ARG_DIFF_DST, user(y, c.dy)},
                                                              {DNNL_ARG_WEIGHTS, weights},
                                                              {DNNL_ARG_DIFF_SRC, user(x, out)}}});
      algo_ = std::string("onednn convolution_backward_data ") + pd.impl_info_str();
    } else {
      const dnnl::convolution_backward_weights::primitive_desc pd(
          {algorithm, x, w_any, y, strides, dilates, pad_l, pad_r}, engine(), hint);
      const memory diff_weights = as_wanted(w_user, pd.diff_weights_desc());
      calls_.push_back({dnnl::convolution_backward_weights(pd), {{DNNL_ARG_SRC, user(x, c.x)},
                                                                 {DNNL_ARG_DIFF_DST, user(y, c.dy)},
                                                                 {DNNL_ARG_DIFF_WEIGHTS, diff_weights}}});
      reorder(diff_weights, w_user);
      algo_ = std::string("onednn convolution_backward_weights ") + pd.impl_info_str();
    }
    if (calls_.size() > 1) algo_ += " (weights reordered)";
  }

  // c = a·op(b), a [m, k] and b [k, n] or, transposed, [n, k]: da = dc·op(b)ᵀ, db = aᵀ·dc (or dcᵀ·a).
  // A transpose is a memory descriptor with the strides swapped (format tag ba), as oneDNN's matmul
  // takes it.
  void gemm(const OnednnProblem::Gemm& p, bool data, float* out) {
    const auto matrix = [](std::int64_t rows, std::int64_t cols, bool transposed) {
      return memory::desc({rows, cols}, f32, transposed ? tag::ba : tag::ab);
    };
    memory src, weights, dst;
    if (data) {
      src = user(matrix(p.m, p.n, false), p.dc);
      weights = user(matrix(p.n, p.k, !p.trans_b), p.b);
      dst = user(matrix(p.m, p.k, false), out);
    } else if (p.trans_b) {
      src = user(matrix(p.n, p.m, true), p.dc);
      weights = user(matrix(p.m, p.k, false), p.a);
      dst = user(matrix(p.n, p.k, false), out);
    } else {
      src = user(matrix(p.k, p.m, true), p.a);
      weights = user(matrix(p.m, p.n, false), p.dc);
      dst = user(matrix(p.k, p.n, false), out);
    }
    const dnnl::matmul::primitive_desc pd({src.get_desc(), weights.get_desc(), dst.get_desc()}, engine());
    algo_ = std::string("onednn matmul ") + pd.impl_info_str();
    calls_.push_back({dnnl::matmul(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}}});
  }

  int threads_;
  std::string algo_;
  // The primitives of one run in order, with their arguments: the reorders into and out of the
  // weights' layout around the convolution.
  std::vector<std::pair<dnnl::primitive, std::unordered_map<int, memory>>> calls_;
};

}  // namespace
}  // namespace porta::bench

extern "C" porta::bench::OnednnCall* porta_bench_onednn_prepare(const porta::bench::OnednnProblem* problem,
                                                                 char* error, std::size_t error_size,
                                                                 bool* unimplemented) {
  *unimplemented = false;
  try {
    return new porta::bench::Call(*problem);
  } catch (const dnnl::error& e) {
    *unimplemented = e.status == dnnl_unimplemented;
    std::snprintf(error, error_size, "%s", e.what());
  } catch (const std::exception& e) {
    std::snprintf(error, error_size, "%s", e.what());
  }
  return nullptr;
}
