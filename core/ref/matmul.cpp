#include <optional>
#include <variant>

#include "core/ref/kernels.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

// Element (i, j) of op(A) op(B) for the matrices starting at a_offset and b_offset. With trans_a
// A's matrix is stored [K, M]; with trans_b B's is stored [N, K].
double dot(const HostTensor& a, std::int64_t a_offset, const HostTensor& b, std::int64_t b_offset,
           const MatMulDims& d, const MatMulParams& p, std::int64_t i, std::int64_t j) {
  double sum = 0.0;
  for (std::int64_t l = 0; l < d.k; ++l) {
    const double av = a.load(a_offset + (p.trans_a ? l * d.m + i : i * d.k + l));
    const double bv = b.load(b_offset + (p.trans_b ? j * d.k + l : l * d.n + j));
    sum += av * bv;
  }
  return sum;
}

}  // namespace

void ref_matmul(const HostOpArgs& args) {
  const auto& p = std::get<MatMulParams>(args.node.params);
  const HostTensor& a = args.inputs[0];
  const HostTensor& b = args.inputs[1];
  const MatMulDims d = matmul_dims(a.shape(), b.shape(), p);
  for (std::int64_t batch = 0; batch < d.batch_count; ++batch) {
    for (std::int64_t i = 0; i < d.m; ++i) {
      for (std::int64_t j = 0; j < d.n; ++j) {
        const double c = dot(a, d.a_offset[batch], b, d.b_offset[batch], d, p, i, j);
        args.output.store(d.c_offset[batch] + i * d.n + j, static_cast<float>(c));
      }
    }
  }
}

void ref_gemm(const HostOpArgs& args) {
  const auto& p = std::get<GemmParams>(args.node.params);
  const HostTensor& a = args.inputs[0];
  const HostTensor& b = args.inputs[1];
  const MatMulParams trans{.trans_a = p.trans_a, .trans_b = p.trans_b};
  const MatMulDims d = matmul_dims(a.shape(), b.shape(), trans);
  std::optional<BroadcastIndex> c_index;
  if (args.inputs.size() == 3) c_index.emplace(args.inputs[2].shape(), args.output.shape());
  for (std::int64_t i = 0; i < d.m; ++i) {
    for (std::int64_t j = 0; j < d.n; ++j) {
      const std::int64_t y_index = i * d.n + j;
      double y = double{p.alpha} * dot(a, 0, b, 0, d, trans, i, j);
      if (c_index) y += double{p.beta} * args.inputs[2].load((*c_index)(y_index));
      args.output.store(y_index, static_cast<float>(activate(p.activation, y)));
    }
  }
}

}  // namespace porta::detail
