// The CPU backend's plans (backends/cpu/plans/) as tables: for shapes on made-up machines, the
// plan each makes, as its one-line description. A change in a tuning rule shows here as a change
// of an expected line. Machines of a kernel set this build lacks are skipped, and say so.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "backends/cpu/kernels/micro_kernel.hpp"
#include "backends/cpu/plans/conv_plan.hpp"
#include "backends/cpu/plans/depthwise_plan.hpp"
#include "backends/cpu/plans/gemm_plan.hpp"

using namespace porta;
using namespace porta::detail;

namespace {

constexpr std::int64_t KiB = 1 << 10, MiB = 1 << 20;
// Zen 4: 32 KiB L1, 1 MiB L2, a chiplet's 32 MiB L3; 2 threads.
const Machine zen4{"avx512", {32 * KiB, 1 * MiB, 32 * MiB}, 2};
const Machine zen4_1t{"avx512", {32 * KiB, 1 * MiB, 32 * MiB}, 1};
// Ice Lake server: 48 KiB L1, 1.25 MiB L2; 8 threads.
const Machine icelake{"avx512", {48 * KiB, 1280 * KiB, 48 * MiB}, 8};
const Machine avx2_only{"avx2", {32 * KiB, 512 * KiB, 16 * MiB}, 4};
const Machine generic{"generic", {32 * KiB, 256 * KiB, 8 * MiB}, 1};

// Whether this build has the machine's kernel set; else a message that its rows are skipped.
bool testable(const Machine& machine) {
  if (isa_built(machine.isa)) return true;
  MESSAGE("skipping the plans of a " << machine.isa << " machine: this build has no such kernels");
  return false;
}

GemmShape plain(std::int64_t m, std::int64_t n, std::int64_t k) { return {.m = m, .n = n, .k = k, .lda = k, .ldb = n}; }
GemmShape b_transposed(std::int64_t m, std::int64_t n, std::int64_t k) {
  return {.m = m, .n = n, .k = k, .lda = k, .ldb = k, .b_trans = true};
}
GemmShape packed_ahead(GemmShape shape) {
  shape.b_packed = true;
  return shape;
}
GemmShape a_transposed(std::int64_t m, std::int64_t n, std::int64_t k) {
  return {.m = m, .n = n, .k = k, .lda = m, .ldb = n, .a_trans = true};
}

struct GemmRow {
  const Machine& machine;
  GemmShape shape;
  std::string plan;
};

// NHWC layer x [n, h, w, c], `k` filters of r x r.
ConvDims layer(std::int64_t n, std::int64_t c, std::int64_t hw, std::int64_t k, std::int64_t r, Conv2dParams& p) {
  p.layout = Layout::NHWC;
  return conv_dims({n, hw, hw, c}, {k, c / p.groups, r, r}, p);
}

Conv2dParams params(std::int64_t stride, std::int64_t pad, std::int64_t groups = 1,
                    Activation activation = Activation::None) {
  return {.stride = {stride, stride}, .pad = {pad, pad, pad, pad}, .groups = groups, .activation = activation};
}

}  // namespace

TEST_SUITE("cpu_plans") {
  TEST_CASE("GEMM plans: shapes x machines") {
    const std::vector<GemmRow> rows = {
        // One row beside a classifier's weights: B streamed as stored.
        {zen4, b_transposed(1, 1000, 2048), "gemm few_rows chunk=128 threads=2"},
        // 32 rows beside them: the transposed product.
        {zen4, b_transposed(32, 1000, 2048), "gemm transposed_product chunk=1000 threads=2"},
        {zen4, plain(3072, 4, 1024), "gemm dot chunk=384 threads=2"},
        {zen4, plain(64, 64, 0), "gemm zero_fill threads=1"},
        // 16 columns on Zen 4's small L1: the 8-row kernel; on Ice Lake's, the 28-row one, threads by columns.
        {zen4, plain(1760, 16, 1760),
         "gemm blocked kernel=avx512 8x16 a=rows b=in_place kc=512 nc=16 pass=1760 threads=2"},
        {icelake, plain(1760, 16, 1760),
         "gemm blocked kernel=avx512 28x16 a=rows b=in_place kc=512 nc=16 pass=1760 split=columns threads=8"},
        // Large and square: both packed, each thread its own B.
        {zen4, plain(2048, 2048, 2048),
         "gemm blocked kernel=avx512 14x32 a=packed b=own_panels kc=512 nc=2048 pass=512 threads=2"},
        // A from memory, rows 16 KiB apart: streamed by the 6x64 kernel; AVX2 has only its 6x16.
        {zen4, plain(4096, 64, 4096),
         "gemm blocked kernel=avx512 6x64 a=rows_streamed b=in_place kc=512 nc=64 pass=4096 threads=2"},
        {avx2_only, plain(4096, 64, 4096),
         "gemm blocked kernel=avx2 6x16 a=rows_streamed b=in_place kc=512 nc=64 pass=4096 threads=4"},
        // 48 columns in one panel of the 7x48 kernel.
        {zen4, plain(2048, 48, 2048),
         "gemm blocked kernel=avx512 7x48 a=rows b=in_place kc=512 nc=48 pass=2048 threads=2"},
        {zen4, a_transposed(64, 64, 1024),
         "gemm blocked kernel=avx512 14x32 a=columns b=in_place kc=512 nc=64 pass=1024 split=columns threads=2"},
        // A transposed A beyond half of L2 (a convolution's filter gradient, C = dy^T im2col(x)): read by
        // columns by the 14 rows of AVX-512's tile, packed for the 6 of AVX2's; within it, or beside
        // fewer than 64 rows, by columns.
        {zen4, a_transposed(128, 1152, 6272),
         "gemm blocked kernel=avx512 14x32 a=columns b=in_place kc=512 nc=1152 pass=6272 split=columns threads=2"},
        {avx2_only, a_transposed(128, 1152, 6272),
         "gemm blocked kernel=avx2 6x16 a=packed b=shared_panels kc=512 nc=1152 pass=512 threads=4"},
        {avx2_only, a_transposed(24, 144, 25088),
         "gemm blocked kernel=avx2 6x16 a=columns b=in_place kc=512 nc=144 pass=25088 split=columns threads=4"},
        {avx2_only, a_transposed(64, 64, 1024),
         "gemm blocked kernel=avx2 6x16 a=columns b=in_place kc=512 nc=64 pass=1024 split=columns threads=4"},
        {icelake, {.m = 256, .n = 256, .k = 256, .a_dtype = DType::f16, .lda = 256, .ldb = 256},
         "gemm blocked kernel=avx512 14x32 a=packed b=own_panels kc=256 nc=256 pass=256 threads=8"},
        // A constant B packed ahead (BERT's layers at sequence 128, ViT's at 197 rows): read as packed,
        // never transposed around, and threads with few rows each share C's columns.
        {zen4_1t, packed_ahead(b_transposed(128, 3072, 768)),
         "gemm blocked kernel=avx512 14x32 a=rows b=packed_ahead kc=512 nc=3072 pass=768 threads=1"},
        {zen4, packed_ahead(b_transposed(128, 3072, 768)),
         "gemm blocked kernel=avx512 14x32 a=rows b=packed_ahead kc=512 nc=3072 pass=768 split=columns threads=2"},
        {zen4_1t, packed_ahead(b_transposed(197, 768, 3072)),
         "gemm blocked kernel=avx512 14x32 a=packed b=packed_ahead kc=512 nc=768 pass=3072 threads=1"},
        // Below 2^20 multiply-adds, on the calling thread.
        {generic, plain(64, 64, 64),
         "gemm blocked kernel=generic 6x16 a=rows b=in_place kc=64 nc=64 pass=64 threads=1"},
    };
    for (const GemmRow& row : rows) {
      if (!testable(row.machine)) continue;
      CAPTURE(row.plan);
      CHECK(describe(plan_gemm(row.shape, row.machine)) == row.plan);
    }
  }

  TEST_CASE("GEMM task grids") {
    if (!testable(zen4)) return;
    // Square: 18 row blocks, a multiple of the threads, of at most mc_max = 126 rows.
    const GemmPlan square = plan_gemm(plain(2048, 2048, 2048), zen4);
    const TaskGrid grid = gemm_task_grid(square, 2048, 2048 / 32);
    CHECK(square.mc_max == 126);
    CHECK((grid.row_blocks == 18 && grid.col_chunks == 1 && !grid.chunk_major));
    // Split by columns, but with fewer panels than two a thread: row blocks and column chunks.
    const GemmPlan transposed = plan_gemm(a_transposed(64, 64, 1024), zen4);
    const TaskGrid small = gemm_task_grid(transposed, 64, 2);
    CHECK((small.row_blocks == 5 && small.col_chunks == 2 && small.chunk_panels == 1 && !small.chunk_major));
    // Split by columns with a chunk of two panels or more a thread: chunk-major.
    const GemmPlan wide = plan_gemm(plain(256, 256, 256), zen4);
    REQUIRE(wide.split_columns);
    const TaskGrid columns = gemm_task_grid(wide, 256, 256 / 32);
    CHECK(columns.chunk_major);
  }

  TEST_CASE("convolution algorithms") {
    Conv2dParams p = params(1, 1);
    const ConvDims d = layer(8, 64, 56, 64, 3, p);
    CHECK(conv_algorithm(d, p, "auto") == ConvAlgorithm::winograd);
    CHECK(conv_algorithm(d, p, "direct") == ConvAlgorithm::direct);
    Conv2dParams narrow = params(1, 1);
    CHECK(conv_algorithm(layer(8, 16, 56, 64, 3, narrow), narrow, "auto") == ConvAlgorithm::direct);
    CHECK(conv_algorithm(layer(8, 16, 56, 64, 3, narrow), narrow, "winograd") == ConvAlgorithm::winograd);
    Conv2dParams strided = params(2, 1);
    CHECK(conv_algorithm(layer(8, 64, 56, 64, 3, strided), strided, "winograd") == ConvAlgorithm::direct);
    Conv2dParams grouped = params(1, 1, 32);
    CHECK(conv_algorithm(layer(8, 32, 56, 32, 3, grouped), grouped, "auto") == ConvAlgorithm::depthwise);
  }

  TEST_CASE("direct convolution plans: layers x machines") {
    struct Row {
      const Machine& machine;
      std::int64_t n, c, hw, k, r, stride, pad;
      std::string plan;
    };
    const std::vector<Row> rows = {
        // A 1x1 layer from memory: streamed by the 6x64 kernel; AVX2's 6x16 in 16-panel tasks.
        {zen4, 8, 64, 56, 256, 1, 1, 0,
         "conv direct kernel=avx512 6x64 a=in_place tiles=8/task panels=4/task images=8 stream"},
        {avx2_only, 8, 64, 56, 256, 1, 1, 0,
         "conv direct kernel=avx2 6x16 a=in_place tiles=8/task panels=16/task images=8 stream"},
        // AVX2, 24 filters: one panel of 4x24, not 16 and a tail of 8; 40: two of 16 and a tail of 8.
        {avx2_only, 8, 96, 56, 24, 1, 1, 0,
         "conv direct kernel=avx2 4x24 a=in_place tiles=8/task panels=1/task images=8 stream"},
        {avx2_only, 8, 240, 28, 40, 1, 1, 0,
         "conv direct kernel=avx2 6x16 a=in_place tiles=8/task panels=3/task images=8 stream"},
        // A 7x7 image's 49 pixels in tiles of 7.
        {zen4, 8, 512, 7, 2048, 1, 1, 0,
         "conv direct kernel=avx512 7x48 a=in_place tiles=7/task panels=4/task images=8"},
        // Rows 4 KiB apart: the 8-row kernel reads them in place.
        {zen4, 8, 1024, 14, 256, 1, 1, 0,
         "conv direct kernel=avx512 8x32 a=in_place tiles=4/task panels=4/task images=8 stream"},
        // Strided 1x1 whose output rows are whole tiles: in place, a segment per row.
        {zen4, 8, 256, 56, 128, 1, 2, 0,
         "conv direct kernel=avx512 14x32 a=in_place tiles=2/task panels=4/task images=8"},
        // 3x3: a padded copy of one image at a time.
        {zen4, 8, 64, 56, 64, 3, 1, 1, "conv direct kernel=avx512 14x32 a=copy tiles=4/task panels=2/task images=1"},
    };
    for (const Row& row : rows) {
      if (!testable(row.machine)) continue;
      Conv2dParams p = params(row.stride, row.pad);
      const ConvDims d = layer(row.n, row.c, row.hw, row.k, row.r, p);
      CAPTURE(row.plan);
      CHECK(describe(plan_conv(d, p, row.machine)) == row.plan);
    }
  }

  TEST_CASE("depthwise plans: layers x machines") {
    struct Row {
      const Machine& machine;
      std::int64_t n, c, hw, r, stride;
      Activation activation;
      DepthwiseOperands operands;
      std::string plan;
    };
    const Activation none = Activation::None;
    const std::vector<Row> rows = {
        // From memory: pixel-major, written past the caches; with y unaligned, by rows in the caches.
        {zen4, 8, 144, 56, 3, 1, none, {}, "conv depthwise sweep=pixel_major bands=56x1 groups=1 stream"},
        {zen4, 8, 144, 56, 3, 1, none, {.y_aligned = false}, "conv depthwise sweep=rows bands=56x1 groups=1"},
        {avx2_only, 8, 144, 56, 3, 1, none, {}, "conv depthwise sweep=pixel_major bands=56x1 groups=1 stream"},
        // In cache: bands that fill half of L2, channels in groups for the threads.
        {zen4, 1, 480, 14, 3, 1, Activation::Silu, {}, "conv depthwise sweep=rows bands=2x7 groups=4"},
        // Bias and ReLU6: added to the sums in registers, pixel-major (AVX2) or chunk-major (AVX-512), in
        // cache, and from memory where the sums cannot go past the caches (AVX2 at 3x3 /2); SiLU in a
        // pass over each row; pairs of rows store their sums.
        {avx2_only, 1, 144, 56, 3, 1, Activation::Relu6, {.bias = true},
         "conv depthwise sweep=pixel_major bands=19x3 groups=1 finish_in_registers"},
        {avx2_only, 1, 144, 56, 3, 1, Activation::Silu, {.bias = true},
         "conv depthwise sweep=pixel_major bands=19x3 groups=1"},
        {zen4, 1, 144, 56, 3, 1, Activation::Relu6, {.bias = true},
         "conv depthwise sweep=rows bands=8x7 groups=1 finish_in_registers"},
        {zen4, 8, 96, 112, 3, 2, Activation::Relu6, {.bias = true},
         "conv depthwise sweep=rows_stride2 bands=28x2 groups=1 row_pairs"},
        {avx2_only, 8, 96, 112, 3, 2, Activation::Relu6, {.bias = true},
         "conv depthwise sweep=rows_stride2 bands=56x1 groups=1 finish_in_registers"},
        // 3x3 /2 from memory: pairs of rows where the set has 32 registers.
        {zen4, 8, 96, 112, 3, 2, none, {}, "conv depthwise sweep=rows_stride2 bands=28x2 groups=1 row_pairs"},
        {avx2_only, 8, 96, 112, 3, 2, none, {}, "conv depthwise sweep=rows_stride2 bands=56x1 groups=1"},
        // 5x5 /2 from memory on one thread: AVX-512's chunk-by-chunk streaming kernel.
        {zen4_1t, 8, 672, 28, 5, 2, none, {}, "conv depthwise sweep=rows_stride2_streamed bands=14x1 groups=1 stream"},
        {generic, 1, 32, 112, 3, 1, none, {}, "conv depthwise sweep=rows bands=38x3 groups=1"},
    };
    for (const Row& row : rows) {
      if (!testable(row.machine)) continue;
      Conv2dParams p = params(row.stride, (row.r - 1) / 2, row.c, row.activation);
      const ConvDims d = layer(row.n, row.c, row.hw, row.c, row.r, p);
      CAPTURE(row.plan);
      CHECK(describe(plan_depthwise(d, p, row.operands, row.machine)) == row.plan);
    }
  }
}
