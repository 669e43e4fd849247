#include <variant>

#include "backends/opencl/ops/ops.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

// What differs between MatMul and Gemm around the shared tiled kernel (kernels/matmul.cl).
struct GemmCall {
  MatMulParams trans;
  MatMulDims dims;
  Tensor c;  // Gemm's optional C, broadcast to [M, N] through the two strides
  float alpha = 1.0f, beta = 0.0f;
  std::int64_t c_row_stride = 0, c_col_stride = 0;
  Activation activation = Activation::None;
  Long8 a_batch_strides{}, b_batch_strides{};  // element strides of each operand's matrices
};

// Element strides of one operand's matrices across the result's batch dims (0 where broadcast).
Long8 batch_strides(Shape operand, const MatMulDims& d, std::int64_t matrix_elements) {
  if (operand.size() == 1) operand = {1, operand[0]};  // vectors have no batch dims
  const Shape batch(operand.begin(), operand.end() - 2);
  Shape strides(d.batch.size(), 0);
  const std::size_t lead = d.batch.size() - batch.size();
  std::int64_t stride = matrix_elements;
  for (std::size_t i = batch.size(); i-- > 0;) {
    strides[lead + i] = batch[i] == 1 ? 0 : stride;
    stride *= batch[i];
  }
  return to_long8(strides, 0);
}

void enqueue_gemm(LaunchBuilder& b, const Node& node, const GemmCall& call) {
  const GemmTiles& t = b.gemm_tiles();
  const MatMulDims& d = call.dims;
  b.note_plan(describe(d), "gemm " + t.to_string());
  auto args = b.kernel("matmul", t.vector_kernel ? "matmul_vector" : "matmul", b.desc(node.output).dtype);
  args.tensor(node.inputs[0]).tensor(node.inputs[1]).tensor(call.c ? call.c : node.output).tensor(node.output)
      .i64(d.m).i64(d.n).i64(d.k).i32(call.trans.trans_a).i32(call.trans.trans_b).i32(call.c ? 1 : 0)
      .f32(call.alpha).f32(call.beta).i64(call.c_row_stride).i64(call.c_col_stride)
      .i32(activation_code(call.activation)).long8(to_long8(d.batch, 1)).long8(call.a_batch_strides)
      .long8(call.b_batch_strides);
  const auto groups = [](std::int64_t extent, int tile) { return static_cast<std::size_t>(ceil_div(extent, tile)); };
  const auto batches = static_cast<std::size_t>(d.batch_count);
  if (t.vector_kernel) {  // one work-item per block
    b.enqueue(std::move(args), 3, {groups(d.n, t.block_n), groups(d.m, t.block_m), batches}, {1, 1, 1});
    return;
  }
  const auto threads_n = static_cast<std::size_t>(t.tile_n / t.work_n);
  const auto threads_m = static_cast<std::size_t>(t.tile_m / t.work_m);
  b.enqueue(std::move(args), 3, {groups(d.n, t.tile_n) * threads_n, groups(d.m, t.tile_m) * threads_m, batches},
            {threads_n, threads_m, 1});
}

}  // namespace

void opencl_matmul(LaunchBuilder& b, const Node& node) {
  GemmCall call;
  call.trans = std::get<MatMulParams>(node.params);
  const Shape& a = b.desc(node.inputs[0]).shape;
  const Shape& bs = b.desc(node.inputs[1]).shape;
  call.dims = matmul_dims(a, bs, call.trans);
  call.a_batch_strides = batch_strides(a, call.dims, call.dims.m * call.dims.k);
  call.b_batch_strides = batch_strides(bs, call.dims, call.dims.k * call.dims.n);
  enqueue_gemm(b, node, call);
}

void opencl_gemm(LaunchBuilder& b, const Node& node) {
  const auto& p = std::get<GemmParams>(node.params);
  GemmCall call;
  call.trans = {.trans_a = p.trans_a, .trans_b = p.trans_b};
  call.dims = matmul_dims(b.desc(node.inputs[0]).shape, b.desc(node.inputs[1]).shape, call.trans);
  call.alpha = p.alpha;
  call.activation = p.activation;
  if (node.inputs.size() == 3) {
    call.c = node.inputs[2];
    call.beta = p.beta;
    const Shape& c = b.desc(call.c).shape;  // rank <= 2, broadcast to [M, N] from the right
    call.c_col_stride = !c.empty() && c.back() != 1 ? 1 : 0;
    call.c_row_stride = c.size() == 2 && c[0] != 1 ? c[1] : 0;
  }
  enqueue_gemm(b, node, call);
}

}  // namespace porta::detail
