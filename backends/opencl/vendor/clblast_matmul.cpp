// MatMul and Gemm through CLBlast's row-major SGEMM on porta's buffers, in place: Gemm for one
// matrix, GemmBatched (an offset per batch) for batches, broadcast ones included; transposes as
// CLBlast's own. Gemm's alpha goes to CLBlast; beta * C and the activation to porta's epilogue
// kernel after it, since CLBlast's beta needs C already in Y's place and it has no activations.
#include <variant>
#include <vector>

#include "backends/opencl/vendor/clblast.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

using clblast_glue::check;
using clblast_glue::element_offset;

clblast::Transpose transpose(bool t) { return t ? clblast::Transpose::kYes : clblast::Transpose::kNo; }

// y = alpha * op(a) op(b), every batch.
void enqueue_sgemm(LaunchBuilder& b, Tensor a, Tensor bt, Tensor y, const MatMulDims& d, MatMulParams trans, float alpha) {
  b.note_plan(describe(d), d.batch_count == 1 ? "clblast Gemm" : "clblast GemmBatched");
  b.library({[=](cl_command_queue queue, const LocateTensor& locate, cl_event* event) {
    const ClTensorRef ra = locate(a), rb = locate(bt), ry = locate(y);
    const auto m = static_cast<std::size_t>(d.m), n = static_cast<std::size_t>(d.n), k = static_cast<std::size_t>(d.k);
    const std::size_t lda = trans.trans_a ? m : k, ldb = trans.trans_b ? k : n;
    const auto at = [](const ClTensorRef& t, std::int64_t offset) { return element_offset(t) + static_cast<std::size_t>(offset); };
    if (d.batch_count == 1) {
      check(clblast::Gemm(clblast::Layout::kRowMajor, transpose(trans.trans_a), transpose(trans.trans_b), m, n, k, alpha,
                          ra.mem, at(ra, d.a_offset[0]), lda, rb.mem, at(rb, d.b_offset[0]), ldb, 0.0f, ry.mem,
                          at(ry, d.c_offset[0]), n, &queue, event),
            "Gemm");
      return;
    }
    const auto batches = static_cast<std::size_t>(d.batch_count);
    std::vector<std::size_t> a_offsets(batches), b_offsets(batches), y_offsets(batches);
    for (std::size_t i = 0; i < batches; ++i) {
      a_offsets[i] = at(ra, d.a_offset[i]);
      b_offsets[i] = at(rb, d.b_offset[i]);
      y_offsets[i] = at(ry, d.c_offset[i]);
    }
    const std::vector<float> alphas(batches, alpha), betas(batches, 0.0f);
    check(clblast::GemmBatched(clblast::Layout::kRowMajor, transpose(trans.trans_a), transpose(trans.trans_b), m, n, k,
                               alphas.data(), ra.mem, a_offsets.data(), lda, rb.mem, b_offsets.data(), ldb,
                               betas.data(), ry.mem, y_offsets.data(), n, batches, &queue, event),
          "GemmBatched");
  }});
}

}  // namespace

void clblast_matmul(LaunchBuilder& b, const Node& node) {
  const auto& p = std::get<MatMulParams>(node.params);
  const MatMulDims d = matmul_dims(b.desc(node.inputs[0]).shape, b.desc(node.inputs[1]).shape, p);
  enqueue_sgemm(b, node.inputs[0], node.inputs[1], node.output, d, p, 1.0f);
}

void clblast_gemm(LaunchBuilder& b, const Node& node) {
  const auto& p = std::get<GemmParams>(node.params);
  const MatMulParams trans{.trans_a = p.trans_a, .trans_b = p.trans_b};
  const MatMulDims d = matmul_dims(b.desc(node.inputs[0]).shape, b.desc(node.inputs[1]).shape, trans);
  enqueue_sgemm(b, node.inputs[0], node.inputs[1], node.output, d, trans, p.alpha);
  const bool has_c = node.inputs.size() == 3;
  if (!has_c && p.activation == Activation::None) return;
  std::int64_t c_row_stride = 0, c_col_stride = 0;
  if (has_c) {
    const Shape& c = b.desc(node.inputs[2]).shape;  // rank <= 2, broadcast to [M, N] from the right
    c_col_stride = !c.empty() && c.back() != 1 ? 1 : 0;
    c_row_stride = c.size() == 2 && c[0] != 1 ? c[1] : 0;
  }
  auto args = b.kernel("epilogue", "gemm_epilogue", DType::f32);
  args.tensor(node.output).tensor(has_c ? node.inputs[2] : node.output).i64(d.m).i64(d.n).i32(has_c ? 1 : 0)
      .f32(p.beta).i64(c_row_stride).i64(c_col_stride).i32(activation_code(p.activation));
  b.enqueue_1d(std::move(args), d.m * d.n);
}

}  // namespace porta::detail
