// MatMul and Gemm through oneDNN's matmul primitive on porta's row-major buffers, in place: one
// 2-D primitive per batch matrix (transposes as strides), Gemm's alpha as an output scale, beta*C
// as a sum post-op over C written into Y first, the activation as an eltwise post-op.
#include <optional>
#include <variant>

#include "backends/cpu/vendor/onednn.hpp"
#include "core/runtime/plan_log.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

using dnnl::memory;

// op(X) of a row-major [rows, cols] matrix (stored [cols, rows] when trans) as a 2-D desc.
memory::desc matrix(std::int64_t rows, std::int64_t cols, bool trans, DType t) {
  const memory::dims strides = trans ? memory::dims{1, rows} : memory::dims{cols, 1};
  return {{rows, cols}, onednn::data_type(t), strides};
}

struct MatmulPrimitive {
  memory::desc a, b, c;
  dnnl::matmul::primitive_desc pd;
};

MatmulPrimitive matmul_primitive(const HostOpArgs& args, const MatMulDims& d, bool trans_a, bool trans_b,
                                 const dnnl::primitive_attr& attr) {
  MatmulPrimitive mp{.a = matrix(d.m, d.k, trans_a, args.inputs[0].dtype()),
                     .b = matrix(d.k, d.n, trans_b, args.inputs[1].dtype()),
                     .c = matrix(d.m, d.n, false, args.output.dtype()),
                     .pd = {}};
  mp.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(mp.a, mp.b, mp.c), attr, onednn::engine());
  return mp;
}

MatMulDims dims_of(const HostOpArgs& args, bool trans_a, bool trans_b) {
  return matmul_dims(args.inputs[0].shape(), args.inputs[1].shape(), {.trans_a = trans_a, .trans_b = trans_b});
}

dnnl::primitive_attr gemm_attr(const GemmParams& p, bool has_c) {
  dnnl::primitive_attr attr;
  if (p.alpha != 1.0f) attr.set_output_scales(0, {p.alpha});
  dnnl::post_ops ops;
  if (has_c) ops.append_sum(1.0f);
  onednn::append_activation(ops, p.activation);
  attr.set_post_ops(ops);
  return attr;
}

bool gemm_has_c(const HostOpArgs& args, const GemmParams& p) { return args.inputs.size() == 3 && p.beta != 0.0f; }

// Y = beta * C, broadcast to [M, N], for the sum post-op to add the product to.
void write_scaled_c(const HostOpArgs& args, const MatMulDims& d, float beta) {
  const HostTensor& c = args.inputs[2];
  const Shape& shape = c.shape();
  const std::int64_t rows = shape.size() >= 2 ? shape[shape.size() - 2] : 1;
  const std::int64_t cols = shape.empty() ? 1 : shape.back();
  const std::int64_t row_stride = rows == 1 ? 0 : cols, col_stride = cols == 1 ? 0 : 1;
  for (std::int64_t i = 0; i < d.m; ++i) {
    for (std::int64_t j = 0; j < d.n; ++j) {
      const auto at = static_cast<std::size_t>(i * row_stride + j * col_stride);
      args.output.store(static_cast<std::size_t>(i * d.n + j), beta * c.load(at));
    }
  }
}

}  // namespace

void onednn_check_matmul(const HostOpArgs& args) {
  const auto& p = std::get<MatMulParams>(args.node.params);
  matmul_primitive(args, dims_of(args, p.trans_a, p.trans_b), p.trans_a, p.trans_b, {});
}

void onednn_matmul(const HostOpArgs& args) {
  onednn::use_device_threads();
  const auto& p = std::get<MatMulParams>(args.node.params);
  const MatMulDims d = dims_of(args, p.trans_a, p.trans_b);
  const MatmulPrimitive mp = matmul_primitive(args, d, p.trans_a, p.trans_b, {});
  if (plans_wanted()) onednn::note_choice(describe(d), mp.pd);
  const dnnl::matmul matmul(mp.pd);
  dnnl::stream stream = onednn::stream();
  const auto bytes = [](const HostTensor& t, std::int64_t offset) {
    return t.data + offset * static_cast<std::int64_t>(size_of(t.dtype()));
  };
  for (std::int64_t batch = 0; batch < d.batch_count; ++batch) {
    matmul.execute(stream, {{DNNL_ARG_SRC, onednn::memory(mp.a, bytes(args.inputs[0], d.a_offset[batch]))},
                            {DNNL_ARG_WEIGHTS, onednn::memory(mp.b, bytes(args.inputs[1], d.b_offset[batch]))},
                            {DNNL_ARG_DST, onednn::memory(mp.c, bytes(args.output, d.c_offset[batch]))}});
  }
  stream.wait();
}

void onednn_check_gemm(const HostOpArgs& args) {
  const auto& p = std::get<GemmParams>(args.node.params);
  matmul_primitive(args, dims_of(args, p.trans_a, p.trans_b), p.trans_a, p.trans_b, gemm_attr(p, gemm_has_c(args, p)));
}

void onednn_gemm(const HostOpArgs& args) {
  onednn::use_device_threads();
  const auto& p = std::get<GemmParams>(args.node.params);
  const MatMulDims d = dims_of(args, p.trans_a, p.trans_b);
  const bool has_c = gemm_has_c(args, p);
  const MatmulPrimitive mp = matmul_primitive(args, d, p.trans_a, p.trans_b, gemm_attr(p, has_c));
  if (plans_wanted()) onednn::note_choice(describe(d), mp.pd);
  if (has_c) write_scaled_c(args, d, p.beta);
  dnnl::stream stream = onednn::stream();
  dnnl::matmul(mp.pd).execute(stream, {{DNNL_ARG_SRC, onednn::memory(mp.a, args.inputs[0].data)},
                                       {DNNL_ARG_WEIGHTS, onednn::memory(mp.b, args.inputs[1].data)},
                                       {DNNL_ARG_DST, onednn::memory(mp.c, args.output.data)}});
  stream.wait();
}

}  // namespace porta::detail
