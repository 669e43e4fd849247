// The host side of the GPU backends, on the CPU: kernel arguments against the reference
// semantics, launch geometry, tile choice, graph-capture bookkeeping, capabilities; and, when cuda
// or hip is compiled in, that a machine without a GPU gets zero devices and a reason.
#include <doctest/doctest.h>

#include <random>
#include <set>

#include "backends/gpu/plan/blas_call.hpp"
#include "backends/gpu/plan/capabilities.hpp"
#include "backends/gpu/plan/capture.hpp"
#include "backends/gpu/plan/launch.hpp"
#include "backends/gpu/plan/op_args.hpp"
#include "core/runtime/op_math.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

using namespace porta::detail;

const Node& last_node(const Graph& g) { return g.nodes().back(); }

}  // namespace

TEST_CASE("gpu plan: broadcast maps agree with the reference broadcasting") {
  const std::vector<std::pair<Shape, Shape>> pairs = {
      {{2, 3, 4}, {2, 3, 4}}, {{4}, {2, 3, 4}}, {{3, 1}, {2, 3, 4}}, {{1}, {5, 7}}, {{2, 1, 4}, {2, 3, 4}}, {{}, {3, 2}}};
  for (const auto& [operand, result] : pairs) {
    CAPTURE(to_string(operand));
    CAPTURE(to_string(result));
    const gpu::IndexMap map = gpu::broadcast_map(operand, result);
    const BroadcastIndex reference(operand, result);
    std::int64_t count = 1;
    for (const auto d : result) count *= d;
    CHECK(map.identity == (operand == result));
    for (std::int64_t i = 0; i < count; ++i) CHECK(gpu::map_index(map, i) == reference(i));
  }
}

TEST_CASE("gpu plan: transpose maps gather the permuted input") {
  const Shape x{2, 3, 4, 5};
  const std::vector<std::int64_t> perm{2, 0, 3, 1};
  const gpu::IndexMap map = gpu::transpose_map(x, perm);
  CHECK_FALSE(map.identity);
  const Shape strides = contiguous_strides(x);
  std::int64_t i = 0;
  for (std::int64_t a = 0; a < x[2]; ++a)
    for (std::int64_t b = 0; b < x[0]; ++b)
      for (std::int64_t c = 0; c < x[3]; ++c)
        for (std::int64_t d = 0; d < x[1]; ++d, ++i)
          CHECK(gpu::map_index(map, i) == b * strides[0] + d * strides[1] + a * strides[2] + c * strides[3]);
  CHECK(gpu::transpose_map({1, 3, 1}, {2, 1, 0}).identity);  // moves only size-1 dims
}

TEST_CASE("gpu plan: matmul arguments address the same elements as the reference") {
  struct Case {
    Shape a, b;
    MatMulParams p;
  };
  const std::vector<Case> cases = {{{3, 1, 5, 17}, {4, 17, 3}, {}}, {{2, 7, 9}, {9, 4}, {}},
                                   {{2, 1, 17, 5}, {3, 7, 17}, {.trans_a = true, .trans_b = true}},
                                   {{17}, {2, 17, 3}, {}}, {{5, 17}, {17}, {}}, {{17}, {5, 17}, {.trans_b = true}}};
  for (const Case& c : cases) {
    CAPTURE(to_string(c.a));
    CAPTURE(to_string(c.b));
    Graph g;
    g.matmul(g.input("a", c.a), g.input("b", c.b), c.p);
    const gpu::GemmArgs args = gpu::gemm_args(g, last_node(g));
    const Shape a = c.a.size() == 1 ? Shape{1, c.a[0]} : c.a, b = c.b.size() == 1 ? Shape{c.b[0], 1} : c.b;
    const MatMulDims d = matmul_dims(a, b, c.p);
    CHECK(args.m == d.m);
    CHECK(args.n == d.n);
    CHECK(args.k == d.k);
    REQUIRE(args.batch_count == d.batch_count);
    for (std::int64_t batch = 0; batch < d.batch_count; ++batch) {
      const gpu::BatchOffsets o = gpu::batch_offsets(args, batch);
      CHECK(o.a == d.a_offset[static_cast<std::size_t>(batch)]);
      CHECK(o.b == d.b_offset[static_cast<std::size_t>(batch)]);
    }
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t l = 0; l < d.k; ++l) CHECK(i * args.a_row + l * args.a_col == (c.p.trans_a ? l * d.m + i : i * d.k + l));
    for (std::int64_t l = 0; l < d.k; ++l)
      for (std::int64_t j = 0; j < d.n; ++j) CHECK(l * args.b_row + j * args.b_col == (c.p.trans_b ? j * d.k + l : l * d.n + j));
  }
}

TEST_CASE("gpu plan: gemm epilogue arguments broadcast C over [M, N]") {
  const std::vector<std::pair<Shape, std::pair<std::int64_t, std::int64_t>>> c_shapes = {
      {{9, 3}, {3, 1}}, {{9, 1}, {1, 0}}, {{1, 3}, {0, 1}}, {{3}, {0, 1}}, {{1}, {0, 0}}};
  for (const auto& [c_shape, strides] : c_shapes) {
    CAPTURE(to_string(c_shape));
    Graph g;
    g.gemm(g.input("a", {9, 17}), g.input("b", {17, 3}), {.alpha = 0.5f, .beta = 2.0f, .activation = Activation::Relu},
           g.input("c", c_shape));
    const gpu::GemmArgs args = gpu::gemm_args(g, last_node(g));
    CHECK(args.has_c);
    CHECK(args.alpha == 0.5f);
    CHECK(args.beta == 2.0f);
    CHECK(args.activation == Activation::Relu);
    CHECK(args.c_row == strides.first);
    CHECK(args.c_col == strides.second);
  }
  Graph g;
  g.gemm(g.input("a", {4, 5}), g.input("b", {5, 6}));
  CHECK_FALSE(gpu::gemm_args(g, last_node(g)).has_c);
}

TEST_CASE("gpu plan: elementwise, pooling, softmax and conv arguments") {
  Graph g;
  const Tensor x = g.input("x", {2, 6, 9, 9}, DType::bf16);
  g.clip(x, -1.0f, 2.0f);
  const gpu::UnaryArgs clip = gpu::unary_args(g, last_node(g));
  CHECK(clip.op == gpu::UnaryOp::Clip);
  CHECK(clip.lo == -1.0f);
  CHECK(clip.hi == 2.0f);
  CHECK(clip.count == 2 * 6 * 9 * 9);
  g.cast(x, DType::f16);
  const gpu::UnaryArgs cast = gpu::unary_args(g, last_node(g));
  CHECK(cast.op == gpu::UnaryOp::Identity);
  CHECK(cast.x_dtype == DType::bf16);
  CHECK(cast.y_dtype == DType::f16);
  g.gelu(x, {.tanh_approximation = true});
  CHECK(gpu::unary_args(g, last_node(g)).op == gpu::UnaryOp::GeluTanh);

  g.max_pool2d(x, {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1, 1, 1}, .ceil_mode = true});
  const gpu::PoolArgs pool = gpu::pool_args(g, last_node(g));
  CHECK(pool.max);
  CHECK(pool.planes == 12);
  CHECK(pool.p == window_output_size(9, 3, 2, 1, 1, 1, true));

  g.softmax(x, 1);
  const gpu::RowArgs softmax = gpu::softmax_args(g, last_node(g));
  CHECK(softmax.outer == 2);
  CHECK(softmax.axis == 6);
  CHECK(softmax.inner == 81);
  CHECK(gpu::softmax_thread_per_row(softmax));  // 6-element rows
  CHECK_FALSE(gpu::softmax_thread_per_row({.outer = 2, .axis = 1000, .inner = 1}));
  g.global_avg_pool(x);
  const gpu::RowArgs global = gpu::global_avg_pool_args(g, last_node(g));
  CHECK(global.outer == 12);
  CHECK(global.axis == 81);

  const Tensor w = g.input("w", {6, 1, 3, 3}, DType::bf16);
  g.conv2d(x, w, {.stride = {2, 1}, .pad = {1, 0, 1, 2}, .dilation = {1, 2}, .groups = 6});
  const gpu::ConvArgs depthwise = gpu::conv_args(g, last_node(g));
  CHECK(depthwise.c_per_group == 1);
  CHECK(depthwise.k_per_group == 1);
  CHECK(depthwise.pad_left == 0);
  CHECK(depthwise.dilation_w == 2);
  CHECK(gpu::use_depthwise_conv(depthwise));
  g.conv2d(x, g.input("w2", {4, 3, 3, 3}, DType::bf16), {.groups = 2});
  const gpu::ConvArgs grouped = gpu::conv_args(g, last_node(g));
  CHECK(grouped.c_per_group == 3);
  CHECK(grouped.k_per_group == 2);
  CHECK_FALSE(gpu::use_depthwise_conv(grouped));
}

TEST_CASE("gpu plan: a convolution's algorithm key changes with every parameter and nothing else") {
  const auto key = [](const Shape& x, const Shape& w, const Conv2dParams& p, DType dtype = DType::f32) {
    Graph g;
    g.conv2d(g.input("x", x, dtype), g.input("w", w, dtype), p, g.input("bias", {w[0]}, dtype), "named");
    return gpu::conv_key(gpu::conv_args(g, last_node(g)));
  };
  const Shape x{2, 8, 9, 9}, w{16, 8, 3, 3};
  const std::string base = key(x, w, {.pad = {1, 1, 1, 1}});
  CHECK(key(x, w, {.pad = {1, 1, 1, 1}, .activation = Activation::Relu}) == base);  // the epilogue is porta's
  const std::vector<std::string> others = {
      key(x, w, {.pad = {1, 1, 1, 1}}, DType::f16),
      key({1, 8, 9, 9}, w, {.pad = {1, 1, 1, 1}}),
      key({2, 8, 9, 10}, w, {.pad = {1, 1, 1, 1}}),
      key(x, {32, 8, 3, 3}, {.pad = {1, 1, 1, 1}}),
      key(x, {16, 8, 1, 3}, {.pad = {1, 1, 1, 1}}),
      key(x, w, {.stride = {2, 1}, .pad = {1, 1, 1, 1}}),
      key(x, w, {.pad = {1, 0, 1, 0}}),
      key(x, w, {.pad = {1, 1, 0, 1}}),  // the bottom pad: another output height
      key(x, w, {.pad = {1, 1, 1, 1}, .dilation = {1, 2}}),
      key(x, {16, 4, 3, 3}, {.pad = {1, 1, 1, 1}, .groups = 2}),
  };
  std::set<std::string> distinct(others.begin(), others.end());
  distinct.insert(base);
  CHECK(distinct.size() == others.size() + 1);
  Graph g;
  g.conv2d(g.input("x", x), g.input("w", w), {.pad = {1, 1, 1, 1}}, g.input("bias", {16}));
  gpu::ConvArgs args = gpu::conv_args(g, last_node(g));
  CHECK(gpu::conv_key(args) == base);
  args.allow_tf32 = true;
  CHECK(gpu::conv_key(args) != base);
}

TEST_CASE("gpu plan: concat is one strided copy per input") {
  Graph g;
  const std::vector<Tensor> xs = {g.input("a", {2, 3, 4}, DType::f16), g.input("b", {2, 5, 4}, DType::f16)};
  g.concat(xs, 1);
  const auto copies = gpu::concat_copies(g, last_node(g));
  REQUIRE(copies.size() == 2);
  CHECK(copies[0].dst_offset == 0);
  CHECK(copies[0].row_bytes == 3 * 4 * 2);
  CHECK(copies[0].rows == 2);
  CHECK(copies[0].dst_pitch == 8 * 4 * 2);
  CHECK(copies[1].dst_offset == 3 * 4 * 2);
  CHECK(copies[1].row_bytes == 5 * 4 * 2);
}

namespace {

gpu::GemmTile tile_of(DType t, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batches,
                      const gpu::DeviceLimits& limits, bool allow_tf32 = false) {
  const gpu::GemmProblem problem{.dtype = t, .m = m, .n = n, .k = k, .batches = batches, .allow_tf32 = allow_tf32};
  return gpu::plan_gemm(problem, limits).tile;
}

}  // namespace

TEST_CASE("gpu plan: launch geometry covers the work within the device's limits") {
  for (const int warp : {32, 64}) {
    CAPTURE(warp);
    const gpu::DeviceLimits limits{.compute_units = 132, .warp_size = warp, .max_threads_per_block = 1024,
                                   .max_grid = {2147483647, 65535, 65535}};
    const gpu::LaunchGeometry small = gpu::elementwise_launch(1000, limits);
    CHECK(std::int64_t{small.grid[0]} * small.block[0] >= 1000);
    CHECK(gpu::elementwise_launch(0, limits).empty());
    const gpu::LaunchGeometry huge = gpu::elementwise_launch(std::int64_t{1} << 40, limits);
    CHECK(huge.grid[0] <= limits.max_grid[0]);  // the kernel strides over the rest
    for (const std::int64_t row : {1, 7, 100, 100000}) {
      const gpu::LaunchGeometry rows = gpu::row_launch(10, row, limits);
      CHECK(rows.block[0] % static_cast<unsigned>(warp) == 0);
      CHECK(rows.block[0] <= 256);  // the kernels' shared scratch holds 256 floats
      CHECK(rows.grid[0] == 10);
    }
    const gpu::LaunchGeometry gemm = gpu::gemm_launch(gpu::GemmTile::Large, 1000, 300, 70000, limits);
    CHECK(gemm.grid[0] == 3);
    CHECK(gemm.grid[1] == 8);
    CHECK(gemm.grid[2] == 65535);
    CHECK(gemm.block[0] == 256);
  }
  const gpu::DeviceLimits h200{.compute_units = 132};
  CHECK(tile_of(DType::f32, 4096, 4096, 4096, 1, h200) == gpu::GemmTile::Large);
  CHECK(tile_of(DType::f32, 256, 256, 256, 1, h200) == gpu::GemmTile::Small);
  CHECK(tile_of(DType::f32, 256, 256, 256, 64, h200) == gpu::GemmTile::Large);
  for (const gpu::GemmTile tile : gpu::gemm_tiles) {
    CAPTURE(gpu::tile_name(tile));
    const gpu::GemmTileShape s = gpu::tile_shape(tile);
    CHECK(s.threads == 256);
    CHECK(s.tile_m % 16 == 0);  // the SIMT kernels lay 256 threads out as 16 x 16
    CHECK(s.tile_n % 16 == 0);
    CHECK(gpu::parse_tile(gpu::tile_name(tile)) == tile);
    for (const DType t : {DType::f32, DType::f16, DType::bf16})
      CHECK(gpu::tile_shared_bytes(tile, t) <= 48 * 1024);  // static shared memory: every device has it
    if (!gpu::is_matrix(tile)) continue;
    // The matrix tiles are 8 warps of 32 lanes (the width of NVIDIA's mma), 2 x 4 over the tile,
    // each warp a whole number of 16 x 16 steps; their depth is whole 16-deep steps.
    CHECK(s.threads / 32 == 8);
    CHECK((s.tile_m / 2) % 16 == 0);
    CHECK((s.tile_n / 4) % 16 == 0);
    CHECK(s.tile_k % 16 == 0);
  }
  CHECK_FALSE(gpu::parse_tile("simt1x1x1"));
}

TEST_CASE("gpu plan: f16 and bf16 GEMMs take the matrix-unit tile only where it runs and fits") {
  const gpu::DeviceLimits simt_only{.compute_units = 132};
  const gpu::DeviceLimits tensor_cores{.compute_units = 132, .matrix_units = true};
  for (const DType t : {DType::f16, DType::bf16}) {
    CAPTURE(to_string(t));
    CHECK(tile_of(t, 4096, 4096, 4096, 1, tensor_cores) == gpu::GemmTile::Matrix);
    CHECK(gpu::is_matrix(tile_of(t, 16, 16, 16, 1, tensor_cores)));
    CHECK_FALSE(gpu::is_matrix(tile_of(t, 17, 127, 9, 1, tensor_cores)));  // k < 16
    CHECK_FALSE(gpu::is_matrix(tile_of(t, 1, 4096, 4096, 1, tensor_cores)));  // a vector
    CHECK(tile_of(t, 4096, 4096, 4096, 1, simt_only) == gpu::GemmTile::Large);
  }
  CHECK(tile_of(DType::f32, 4096, 4096, 4096, 1, tensor_cores) == gpu::GemmTile::Large);
}

TEST_CASE("gpu plan: f32 takes the tf32 matrix-unit tile only when allowed, on a device that runs it") {
  const gpu::DeviceLimits sm90{.compute_units = 132, .matrix_units = true,
                               .tf32 = gpu::native_tf32(gpu::nvidia_capabilities(9, 0))};
  const gpu::DeviceLimits mi300{.compute_units = 304, .warp_size = 64, .matrix_units = true,
                                .tf32 = gpu::native_tf32(gpu::amd_capabilities("gfx942"))};
  REQUIRE(sm90.tf32);
  CHECK_FALSE(mi300.tf32);  // the chip has xf32, but porta has no kernel for it: never claimed
  CHECK(tile_of(DType::f32, 4096, 4096, 4096, 1, sm90, true) == gpu::GemmTile::Matrix);
  CHECK(gpu::is_matrix(tile_of(DType::f32, 16, 16, 16, 1, sm90, true)));
  // The default is exact f32 on the SIMT tiles.
  CHECK(tile_of(DType::f32, 4096, 4096, 4096, 1, sm90) == gpu::GemmTile::Large);
  CHECK(tile_of(DType::f32, 4096, 4096, 4096, 1, sm90, false) == gpu::GemmTile::Large);
  CHECK(tile_of(DType::f32, 4096, 4096, 4096, 1, mi300, true) == gpu::GemmTile::Large);
  CHECK(tile_of(DType::f32, 4096, 4096, 4096, 1, {.compute_units = 132, .tf32 = true}, true) ==
        gpu::GemmTile::Large);  // tf32 without the matrix tile compiled in
  CHECK_FALSE(gpu::is_matrix(tile_of(DType::f32, 17, 127, 9, 1, sm90, true)));  // k < 16
  CHECK_FALSE(gpu::is_matrix(tile_of(DType::f32, 1, 4096, 4096, 1, sm90, true)));
  // allow_tf32 changes nothing for f16 and bf16.
  CHECK(tile_of(DType::bf16, 4096, 4096, 4096, 1, mi300, true) == gpu::GemmTile::Matrix);
  CHECK(tile_of(DType::f16, 4096, 4096, 4096, 1, sm90, true) == gpu::GemmTile::Matrix);

  CHECK(gpu::native_tf32(gpu::nvidia_capabilities(8, 0)));
  CHECK_FALSE(gpu::native_tf32(gpu::nvidia_capabilities(7, 5)));  // Turing: no tf32
  for (const char* arch : {"gfx90a", "gfx940", "gfx942", "gfx1030", "gfx1100"}) {
    CAPTURE(arch);
    CHECK_FALSE(gpu::native_tf32(gpu::amd_capabilities(arch)));
  }
}

TEST_CASE("gpu plan: the GEMM tile fills the compute units before it saves loads") {
  const gpu::DeviceLimits h100{.compute_units = 132};
  const gpu::DeviceLimits tensor_cores{.compute_units = 132, .matrix_units = true};
  // 25 blocks of the large tile leave 107 of 132 SMs idle: a smaller tile gives them work.
  const gpu::GemmPlan idle = gpu::plan_gemm({.m = 640, .n = 640, .k = 4096}, h100);
  CHECK(idle.tile != gpu::GemmTile::Large);
  CHECK(idle.geometry.grid[0] * idle.geometry.grid[1] > 25);
  // Large problems keep the large tiles: whole waves either way, and fewer loads per flop.
  CHECK(tile_of(DType::f32, 8192, 8192, 8192, 1, h100) == gpu::GemmTile::Large);
  CHECK(tile_of(DType::bf16, 8192, 8192, 8192, 1, tensor_cores) == gpu::GemmTile::Matrix);
  // A convolution with 64 filters (ResNet-50's first 3x3 layers) fills the 64-row tiles exactly; at
  // batch 1, 25 of them would leave SMs idle, and the f32 one takes the 64x64 tile.
  CHECK(tile_of(DType::f32, 64, 32 * 56 * 56, 64 * 9, 1, h100) == gpu::GemmTile::Wide);
  CHECK(tile_of(DType::f32, 64, 56 * 56, 64 * 9, 1, h100) == gpu::GemmTile::Small);
  for (const std::int64_t batch : {1, 32})
    CHECK(tile_of(DType::bf16, 64, batch * 56 * 56, 64 * 9, 1, tensor_cores) == gpu::GemmTile::MatrixWide);
  // A tile whose shared memory the device does not give a block is never chosen.
  const gpu::DeviceLimits tiny_shared{.compute_units = 132, .matrix_units = true, .shared_per_block = 20 * 1024};
  CHECK(tile_of(DType::f32, 4096, 4096, 4096, 1, tiny_shared) == gpu::GemmTile::Large);
  CHECK(tile_of(DType::bf16, 4096, 4096, 4096, 1, tiny_shared) == gpu::GemmTile::Large);  // no matrix tile fits
}

TEST_CASE("gpu plan: a forced tile applies where its kernel can run the problem, else the plan says why not") {
  const gpu::DeviceLimits h100{.compute_units = 132, .matrix_units = true, .tf32 = true};
  const gpu::GemmProblem f32{.m = 4096, .n = 4096, .k = 4096};
  const gpu::GemmPlan small = gpu::plan_gemm(f32, h100, gpu::GemmTile::Small);
  CHECK(small.tile == gpu::GemmTile::Small);
  CHECK(small.note.empty());
  CHECK(small.geometry.grid[0] == 64);
  CHECK(small.geometry.grid[1] == 64);
  // A matrix tile would run f32 as tf32, which the caller did not allow: refused, with the reason.
  // The SIMT tiles run f16 and bf16 too.
  CHECK(gpu::plan_gemm({.dtype = DType::bf16, .m = 4096, .n = 4096, .k = 4096}, h100, gpu::GemmTile::Wide).tile ==
        gpu::GemmTile::Wide);
  const gpu::GemmPlan refused = gpu::plan_gemm(f32, h100, gpu::GemmTile::Matrix);
  CHECK(refused.tile == gpu::GemmTile::Large);
  CHECK(contains(gpu::describe(refused, h100), "PORTA_GPU_TILE=mma128x128x32 does not apply"));
  CHECK(gpu::plan_gemm({.m = 4096, .n = 4096, .k = 4096, .allow_tf32 = true}, h100, gpu::GemmTile::MatrixWide).tile ==
        gpu::GemmTile::MatrixWide);
  CHECK(gpu::describe(small, h100) == "simt64x64x16, 4096 blocks on 132 CUs");
  CHECK(gpu::describe(f32) == "f32 m=4096 n=4096 k=4096 batches=1");
}

TEST_CASE("gpu plan: convolutions plan their implicit GEMM, or the direct kernel for depthwise ones") {
  const gpu::DeviceLimits h100{.compute_units = 132};
  Graph g;
  g.conv2d(g.input("x", {32, 64, 56, 56}), g.input("w", {64, 64, 3, 3}), {.pad = {1, 1, 1, 1}});
  const gpu::ConvArgs dense = gpu::conv_args(g, last_node(g));
  const gpu::GemmProblem problem = gpu::conv_gemm_problem(dense);
  CHECK(problem.m == 64);
  CHECK(problem.n == 32 * 56 * 56);
  CHECK(problem.k == 64 * 9);
  const gpu::ConvPlan plan = gpu::plan_conv(dense, h100);
  CHECK_FALSE(plan.depthwise);
  CHECK(gpu::describe(plan, h100) == "conv implicit_gemm simt64x128x16, 784 blocks on 132 CUs");
  CHECK(gpu::conv_index_limit(dense).empty());

  g.conv2d(g.input("xd", {1, 32, 9, 9}), g.input("wd", {32, 1, 3, 3}), {.groups = 32});
  const gpu::ConvPlan depthwise = gpu::plan_conv(gpu::conv_args(g, last_node(g)), h100);
  CHECK(depthwise.depthwise);
  CHECK(gpu::describe(depthwise, h100) == "conv direct (depthwise)");
  CHECK_FALSE(depthwise.gemm.geometry.empty());

  // 2^31 elements or more in a tensor: the 32-bit kernels refuse, saying why and what to do.
  gpu::ConvArgs huge = dense;
  huge.n = 16384;  // 3.3e9 input elements
  CHECK(contains(gpu::conv_index_limit(huge), "2^31"));
  CHECK(contains(gpu::conv_index_limit(huge), "split the batch"));
}

TEST_CASE("gpu plan: FastDivisor divides every index below 2^31 exactly") {
  std::mt19937 random(11);
  std::vector<std::int64_t> divisors = {1, 2, 3, 7, 9, 49, 56, 64, 3136, 12544, 65535, 65536, 1000003,
                                        (std::int64_t{1} << 30) + 1, (std::int64_t{1} << 31) - 1};
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + static_cast<std::int64_t>(random() % 100000));
  for (const std::int64_t d : divisors) {
    CAPTURE(d);
    const gpu::FastDivisor divisor(d);
    const auto u = static_cast<std::uint32_t>(d);
    std::vector<std::uint32_t> numerators = {0, 1, u - 1, u, u + 1, 2 * u - 1, 0x7fffffffu, 0x7ffffffeu};
    for (int i = 0; i < 200; ++i) numerators.push_back(static_cast<std::uint32_t>(random() & 0x7fffffffu));
    for (const std::uint32_t n : numerators) {
      if (n > 0x7fffffffu) continue;
      CAPTURE(n);
      REQUIRE(divisor.div(n) == n / u);
    }
  }
  static_assert(gpu::FastDivisor(7).div(50) == 7);  // constexpr: the kernels' own code
}

namespace {

// What a column-major BLAS computes for `call` (porta's B is its first operand, A its second), on
// the CPU: Y(r, c) = sum_l op1(r, l) op2(l, c). The operands are read through the stored layouts
// that a library which describes them (cuBLASLt) is given, each element checked to lie inside.
std::vector<double> column_major_gemm(const gpu::BlasGemm& call, const gpu::GemmArgs& args, const std::vector<double>& a,
                                      const std::vector<double>& b) {
  const auto at = [](const std::vector<double>& x, std::int64_t offset, const gpu::BlasOperand& op,
                     const gpu::BlasLayout& stored, std::int64_t r, std::int64_t c) {
    const std::int64_t i = op.transpose ? c : r, j = op.transpose ? r : c;  // in the stored matrix
    REQUIRE((i < stored.rows && j < stored.cols && stored.rows <= stored.ld));
    return x[static_cast<std::size_t>(offset + i + j * stored.ld)];
  };
  const gpu::BlasLayout first = gpu::first_layout(call), second = gpu::second_layout(call);
  const gpu::BlasLayout result = gpu::result_layout(call);
  REQUIRE((result.rows == call.m && result.cols == call.n && result.ld >= call.m));
  std::vector<double> y(static_cast<std::size_t>(call.batch_count * call.stride_y));
  for (std::int64_t batch = 0; batch < call.batch_count; ++batch) {
    const gpu::BatchOffsets o = call.uniform_batches
                                    ? gpu::BatchOffsets{.a = batch * call.stride_second, .b = batch * call.stride_first}
                                    : gpu::batch_offsets(args, batch);
    for (std::int64_t r = 0; r < call.m; ++r)
      for (std::int64_t c = 0; c < call.n; ++c) {
        double sum = 0.0;
        for (std::int64_t l = 0; l < call.k; ++l)
          sum += at(b, o.b, call.first, first, r, l) * at(a, o.a, call.second, second, l, c);
        y[static_cast<std::size_t>(batch * call.stride_y + r + c * result.ld)] = sum;
      }
  }
  return y;
}

}  // namespace

TEST_CASE("gpu plan: the column-major BLAS call computes porta's row-major matmul") {
  struct Case {
    Shape a, b;
    MatMulParams p;
  };
  const std::vector<Case> cases = {{{3, 1, 5, 17}, {4, 17, 3}, {}},
                                   {{2, 7, 9}, {9, 4}, {}},
                                   {{2, 1, 17, 5}, {3, 7, 17}, {.trans_a = true, .trans_b = true}},
                                   {{6, 5}, {3, 6}, {.trans_a = true, .trans_b = true}},
                                   {{5, 6}, {3, 6}, {.trans_b = true}},
                                   {{6, 5}, {6, 3}, {.trans_a = true}},
                                   {{17}, {2, 17, 3}, {}},
                                   {{5, 17}, {17}, {}},
                                   {{17}, {5, 17}, {.trans_b = true}},
                                   {{17}, {17}, {}},
                                   {{1, 1}, {1, 1}, {}},
                                   {{4, 1}, {1, 3}, {}}};
  int uniform = 0, per_batch = 0;
  for (const Case& c : cases) {
    CAPTURE(to_string(c.a));
    CAPTURE(to_string(c.b));
    Graph g;
    g.matmul(g.input("a", c.a), g.input("b", c.b), c.p);
    const gpu::GemmArgs args = gpu::gemm_args(g, last_node(g));
    const gpu::BlasGemm call = gpu::blas_gemm(args);
    CHECK(gpu::fits_int32(call));
    (call.uniform_batches ? uniform : per_batch) += 1;
    // Small integers, so that every sum is exact.
    std::vector<double> a(static_cast<std::size_t>(g.desc(g.nodes().back().inputs[0]).numel()));
    std::vector<double> b(static_cast<std::size_t>(g.desc(g.nodes().back().inputs[1]).numel()));
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(static_cast<int>(i * 7 % 11) - 5);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(static_cast<int>(i * 5 % 13) - 6);
    const std::vector<double> got = column_major_gemm(call, args, a, b);
    REQUIRE(got.size() == static_cast<std::size_t>(args.batch_count * args.m * args.n));
    for (std::int64_t batch = 0; batch < args.batch_count; ++batch) {
      const gpu::BatchOffsets o = gpu::batch_offsets(args, batch);
      for (std::int64_t i = 0; i < args.m; ++i)
        for (std::int64_t j = 0; j < args.n; ++j) {
          double want = 0.0;
          for (std::int64_t l = 0; l < args.k; ++l)
            want += a[static_cast<std::size_t>(o.a + i * args.a_row + l * args.a_col)] *
                    b[static_cast<std::size_t>(o.b + l * args.b_row + j * args.b_col)];
          CHECK(got[static_cast<std::size_t>(batch * args.m * args.n + i * args.n + j)] == want);
        }
    }
  }
  CHECK(uniform > 0);
  CHECK(per_batch > 0);  // [3, 1] x [4] batch broadcast is not evenly strided
  gpu::BlasGemm huge;
  huge.m = std::int64_t{1} << 31;
  CHECK_FALSE(gpu::fits_int32(huge));
}

TEST_CASE("gpu plan: a library with fused epilogues takes C as bias or matrix, then ReLU") {
  struct Case {
    Shape c;
    GemmParams p;
    bool bias, c_matrix, relu, porta_addend;
    Activation porta_activation;
  };
  const Activation none = Activation::None, relu = Activation::Relu, gelu = Activation::Gelu;
  const std::vector<Case> cases = {
      {{}, {.activation = relu}, false, false, true, false, none},                    // no C
      {{3}, {.activation = relu}, true, false, true, false, none},                    // [N], beta 1: bias
      {{1, 3}, {}, true, false, false, false, none},                                  // [1, N]: bias too
      {{3}, {.beta = 0.5f, .activation = relu}, false, false, false, true, relu},     // scaled bias: porta
      {{9, 3}, {.beta = 0.5f, .activation = relu}, false, true, true, false, none},   // dense C: the library's
      {{9, 1}, {.activation = relu}, false, false, false, true, relu},                // a column: porta
      {{1}, {}, false, false, false, true, none},                                     // a scalar: porta
      {{3}, {.activation = gelu}, true, false, false, false, gelu},                   // erf GELU: porta's
  };
  for (const Case& c : cases) {
    CAPTURE(to_string(c.c));
    CAPTURE(to_string(c.p.activation));
    Graph g;
    const Tensor cin = c.c.empty() ? Tensor{} : g.input("c", c.c);
    g.gemm(g.input("a", {9, 17}), g.input("b", {17, 3}), c.p, cin);
    const gpu::BlasEpilogue e = gpu::blas_epilogue(gpu::gemm_args(g, last_node(g)));
    CHECK(e.bias == c.bias);
    CHECK(e.c_matrix == c.c_matrix);
    CHECK(e.relu == c.relu);
    CHECK(e.porta_addend == c.porta_addend);
    CHECK(e.porta_activation == c.porta_activation);
    CHECK(e.porta_epilogue() == (c.porta_addend || c.porta_activation != none));
  }
  Graph g;
  g.gemm(g.input("a", {9, 17}), g.input("b", {17, 3}), {}, g.input("c", {3}));
  gpu::GemmArgs batched = gpu::gemm_args(g, last_node(g));
  batched.batch_count = 2;  // one C for every batch: the library would want one per batch
  CHECK(gpu::blas_epilogue(batched).porta_addend);
}

TEST_CASE("gpu plan: a BLAS call's alignment is the tensors' unless batch strides break it") {
  Graph g;
  g.matmul(g.input("a", {4, 9, 17}), g.input("b", {4, 17, 3}));  // strides of 153, 51 and 27 elements
  const gpu::BlasGemm odd = gpu::blas_gemm(gpu::gemm_args(g, last_node(g)));
  REQUIRE(odd.uniform_batches);
  CHECK(gpu::blas_alignment(odd, 4, 256) == 4);
  CHECK(gpu::blas_alignment(odd, 2, 256) == 2);
  Graph h;
  h.matmul(h.input("a", {4, 16, 32}), h.input("b", {32, 8}));  // B broadcast: stride 0
  const gpu::BlasGemm even = gpu::blas_gemm(gpu::gemm_args(h, last_node(h)));
  CHECK(gpu::blas_alignment(even, 4, 256) == 256);  // 512 * 4 and 128 * 4 bytes
  CHECK(gpu::blas_alignment(even, 2, 256) == 256);
  Graph one;
  one.matmul(one.input("a", {9, 17}), one.input("b", {17, 3}));
  CHECK(gpu::blas_alignment(gpu::blas_gemm(gpu::gemm_args(one, last_node(one))), 4, 256) == 256);
}

TEST_CASE("gpu plan: epilogues after a library call broadcast C and the conv bias") {
  Graph g;
  g.gemm(g.input("a", {9, 17}), g.input("b", {17, 3}), {.alpha = 2.0f, .beta = 0.5f, .activation = Activation::Relu},
         g.input("c", {9, 1}));
  const gpu::EpilogueArgs e = gpu::gemm_epilogue_args(gpu::gemm_args(g, last_node(g)));
  CHECK(e.count == 27);
  CHECK(e.addend_scale == 0.5f);
  CHECK(e.activation == Activation::Relu);
  for (std::int64_t i = 0; i < 9; ++i)
    for (std::int64_t j = 0; j < 3; ++j) CHECK(gpu::map_index(e.addend_map, i * 3 + j) == i);

  Graph h;
  h.conv2d(h.input("x", {2, 3, 6, 5}), h.input("w", {4, 3, 3, 3}), {.activation = Activation::Silu}, h.input("bias", {4}));
  const gpu::ConvArgs conv = gpu::conv_args(h, last_node(h));
  const gpu::EpilogueArgs bias = gpu::conv_epilogue_args(conv, true);
  CHECK(bias.count == 2 * 4 * 4 * 3);
  CHECK(bias.activation == Activation::Silu);
  for (std::int64_t i = 0; i < bias.count; ++i) CHECK(gpu::map_index(bias.addend_map, i) == i / 12 % 4);
}

TEST_CASE("gpu plan: eager first, then capture once, replay while the buffers stay") {
  int arena = 0, constants = 0, other = 0;
  gpu::CapturePolicy policy(true);
  CHECK(policy.next_run(&arena, &constants, false) == gpu::RunMode::Eager);
  CHECK(policy.next_run(&arena, &constants, false) == gpu::RunMode::Capture);
  policy.captured();
  CHECK(policy.next_run(&arena, &constants, false) == gpu::RunMode::Replay);
  CHECK(policy.next_run(&arena, &constants, true) == gpu::RunMode::Eager);  // profiling
  CHECK(policy.next_run(&arena, &constants, false) == gpu::RunMode::Replay);
  CHECK(policy.next_run(&other, &constants, false) == gpu::RunMode::Eager);  // new buffers: start over
  CHECK_FALSE(policy.have_graph());
  CHECK(policy.next_run(&other, &constants, false) == gpu::RunMode::Capture);
  policy.capture_failed();
  CHECK(policy.next_run(&other, &constants, false) == gpu::RunMode::Eager);
  CHECK(policy.next_run(&other, &constants, false) == gpu::RunMode::Eager);

  gpu::CapturePolicy off(false);
  for (int i = 0; i < 3; ++i) CHECK(off.next_run(&arena, &constants, false) == gpu::RunMode::Eager);
}

TEST_CASE("gpu plan: capabilities from the architecture") {
  const gpu::Capabilities h100 = gpu::nvidia_capabilities(9, 0);
  CHECK(h100.arch == "sm_90");
  CHECK((h100.fp16 && h100.bf16 && h100.matrix_units && h100.tf32));
  const gpu::Capabilities v100 = gpu::nvidia_capabilities(7, 0);
  CHECK(v100.matrix_units);
  CHECK_FALSE(v100.bf16);
  CHECK_FALSE(v100.tf32);
  const gpu::Capabilities mi250 = gpu::amd_capabilities("gfx90a:sramecc+:xnack-");
  CHECK(mi250.arch == "gfx90a");
  CHECK((mi250.bf16 && mi250.matrix_units));
  CHECK_FALSE(mi250.tf32);
  const gpu::Capabilities rdna2 = gpu::amd_capabilities("gfx1030");
  CHECK(rdna2.arch == "gfx1030");
  CHECK_FALSE(rdna2.matrix_units);
  CHECK(gpu::amd_capabilities("gfx942").tf32);
}

TEST_CASE("gpu backends compiled in report their devices, or none with a reason") {
  for (const BackendStatus& b : backends()) {
    if (b.name != "cuda" && b.name != "hip") continue;
    CAPTURE(b.name);
    if (b.devices.empty()) {
      MESSAGE(b.name << ": " << b.reason);
      // A module build (docs/embedding.md) may also have no module for it, or one that did not load.
      CHECK((b.reason.starts_with("no driver") || b.reason.starts_with("no device") ||
             b.reason.starts_with("the runtime") || b.reason.starts_with("no module libporta-" + b.name) ||
             b.reason.starts_with("not loaded: ")));
      check_error([&] { Device::open(b.name + ":0"); }, ErrorCode::DeviceUnavailable, {b.name, b.reason});
      continue;
    }
    for (const DeviceInfo& d : b.devices) {
      CAPTURE(d.spec);
      CHECK(d.subgroup_size > 0);
      CHECK(d.compute_units > 0);
      CHECK(d.memory_total > 0);
      CHECK(d.arch.size() > 0);
    }
    check_error([&] { Device::open(b.name + ":0:graphs=maybe"); }, ErrorCode::InvalidArgument, {"graphs"});
    check_error([&] { Device::open(b.name + ":" + std::to_string(b.devices.size())); }, ErrorCode::NotFound, {b.name});
  }
}

}  // namespace porta::test
