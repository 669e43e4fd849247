// Winograd F(4x4, 3x3): each 4x4 block of outputs (a tile) comes from its 6x6 input window as
// Y = A^T [(G g G^T) .* (B^T d B)] A, with 36 multiplies per tile, channel and filter where the
// direct kernel needs 144. Summed over channels, those products are 36 independent GEMMs, one
// per transform point xi: M[xi][tile, k] = V[xi][tile, c] x U[xi][c, k], run by the GEMM
// micro-kernel with V read in place as A and U = G g G^T packed once as B panels.
// A run goes by chunks of tiles, as many as keep V within a few L2 sizes: first every tile's
// input transform into V, then tasks of (tile block x filter block) that run the 36 GEMMs into
// a small M and transform it back into output pixels, through the fused epilogue.
#include "backends/cpu/ops/conv2d_winograd.hpp"

#include <algorithm>
#include <array>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "backends/cpu/kernels/cache_sizes.hpp"
#include "backends/cpu/kernels/epilogue.hpp"
#include "backends/cpu/kernels/lanes16.hpp"
#include "backends/cpu/kernels/micro_kernel.hpp"
#include "backends/cpu/kernels/vector_kernels.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

constexpr int out_tile = winograd_out_tile, in_tile = winograd_in_tile, points = winograd_points;

// G (3 -> 6), the filter's 1-D transform at the transforms' points.
template <class T>
[[gnu::always_inline]] inline void filter_1d(const T* x, int xs, T* y, int ys) {
  const T x0 = x[0], x1 = x[xs], x2 = x[2 * xs];
  y[0] = x0 * (1.0f / 4);
  y[ys] = (x0 + x1 + x2) * (-1.0f / 6);
  y[2 * ys] = (x0 - x1 + x2) * (-1.0f / 6);
  y[3 * ys] = x0 * (1.0f / 24) + x1 * (1.0f / 12) + x2 * (1.0f / 6);
  y[4 * ys] = x0 * (1.0f / 24) - x1 * (1.0f / 12) + x2 * (1.0f / 6);
  y[5 * ys] = x2;
}

// U: per transform point, panels of nr filters, each [c][nr], zero past the last filter.
std::int64_t filter_panels(const ConvDims& d, std::int64_t nr) { return ceil_div(d.k, nr); }

// Filters that are not constant (a training step's) are transformed on every run, so this runs
// 16 filters at a time, one per lane, and writes each point's values as whole runs of a panel row.
void transform_filters(const ConvDims& d, const float* w, std::int64_t nr, float* u) {
  const std::int64_t panels = filter_panels(d, nr), per_panel = nr / lanes16;
  tbb::parallel_for(std::int64_t{0}, panels * per_panel, [&](std::int64_t task) {
    const std::int64_t k0 = task * lanes16, lanes = std::clamp<std::int64_t>(d.k - k0, 0, lanes16);
    float* panel_row = u + task / per_panel * d.c * nr + task % per_panel * lanes16;
    for (std::int64_t c = 0; c < d.c; ++c, panel_row += nr) {
      std::array<Lanes16, 9> g{};
      for (std::int64_t j = 0; j < lanes; ++j)
        for (int tap = 0; tap < 9; ++tap) g[static_cast<std::size_t>(tap)][j] = w[((k0 + j) * d.c + c) * 9 + tap];
      std::array<Lanes16, points> transformed;
      winograd_2d<3, in_tile>(g.data(), transformed.data(), filter_1d<Lanes16>);
      for (int xi = 0; xi < points; ++xi)
        store_vector<lanes16>(panel_row + xi * panels * d.c * nr, transformed[static_cast<std::size_t>(xi)]);
    }
  });
}

// How a run is cut. Tiles are numbered image by image, row by row.
struct Plan {
  std::int64_t tiles_h, tiles_w, tiles;  // per image (h, w) and in all
  std::int64_t lda;                      // floats between rows of V: whole lane groups, off 4 KiB
  std::int64_t chunk;                    // tiles per chunk
  std::int64_t block, filters;           // per task: tiles (a multiple of mr) and filters (of nr)
};

Plan plan_for(const ConvDims& d, const MicroKernel& kernel) {
  Plan plan{};
  plan.tiles_h = ceil_div(d.p, out_tile);
  plan.tiles_w = ceil_div(d.q, out_tile);
  plan.tiles = d.n * plan.tiles_h * plan.tiles_w;
  plan.lda = round_up(d.c, lanes16);  // the transforms write whole groups of 16 channels
  if (rows_alias_in_l1(kernel.mr, plan.lda)) plan.lda += lanes16;
  // When the transformed filters fit in L2, a chunk's V is sized to fit beside them and the
  // products M (about as large), and chunks run on threads of their own, start to end. Larger
  // filters stream from memory once per chunk, so chunks grow (to a few L2 sizes) and the
  // threads share each one's work instead.
  const std::int64_t l2 = host_cache_sizes().l2, u_bytes = points * d.c * d.k * std::int64_t{sizeof(float)};
  const std::int64_t v_bytes = u_bytes < l2 ? std::max((l2 - u_bytes) / 2, l2 / 8) : std::clamp(u_bytes, 2 * l2, 8 * l2);
  const std::int64_t v_rows = v_bytes / std::int64_t{sizeof(float)} / (points * plan.lda);
  plan.chunk = std::clamp(v_rows / kernel.mr * kernel.mr, kernel.mr, round_up(plan.tiles, kernel.mr));
  plan.block = std::min(4 * kernel.mr, plan.chunk);
  plan.filters = std::min(2 * kernel.nr, round_up(d.k, kernel.nr));
  // Enough tasks to keep every thread busy on a small layer.
  const std::int64_t wanted = 4 * std::int64_t{tbb::this_task_arena::max_concurrency()};
  const auto tasks = [&] { return ceil_div(std::min(plan.chunk, plan.tiles), plan.block) * ceil_div(d.k, plan.filters); };
  while (tasks() < wanted && plan.block > kernel.mr) plan.block -= kernel.mr;
  while (tasks() < wanted && plan.filters > kernel.nr) plan.filters -= kernel.nr;
  return plan;
}

struct TileAt {
  std::int64_t n, oh, ow;  // image and first output pixel
};

TileAt tile_at(const Plan& plan, std::int64_t tile) {
  const std::int64_t per_image = plan.tiles_h * plan.tiles_w, in_image = tile % per_image;
  return {tile / per_image, in_image / plan.tiles_w * out_tile, in_image % plan.tiles_w * out_tile};
}

// V[xi][t] = (B^T d B)[xi] for tiles [first, first + count), t counted from `first`; the rows of
// one point are `chunk` apart.
void transform_inputs(const ConvOperands& op, const Plan& plan, std::int64_t first, std::int64_t count, float* v) {
  const ConvDims& d = op.d;
  const WinogradInputFn input = vector_kernels().winograd_input;
  tbb::parallel_for(std::int64_t{0}, count, [&](std::int64_t t) {
    const TileAt at = tile_at(plan, first + t);
    std::array<const float*, points> pixel{};  // null in the padding
    for (int i = 0; i < in_tile; ++i)
      for (int j = 0; j < in_tile; ++j) {
        const std::int64_t h = at.oh - op.p.pad[0] + i, w = at.ow - op.p.pad[1] + j;
        if (h >= 0 && h < d.h && w >= 0 && w < d.w) pixel[i * in_tile + j] = op.x + ((at.n * d.h + h) * d.w + w) * d.c;
      }
    input(pixel.data(), d.c, v + t * plan.lda, plan.chunk * plan.lda);
  });
}

// Tiles [first, first + rows) and filters [k0, k0 + cols) of a chunk whose V starts at `v`:
// the 36 GEMMs into m, each [round_up(rows, mr)][plan.filters], then the output transform
// and the epilogue.
void multiply_and_finish(const ConvOperands& op, const Plan& plan, const MicroKernel& kernel, const float* u,
                         const float* v, std::int64_t chunk_first, std::int64_t first, std::int64_t rows,
                         std::int64_t k0, std::int64_t cols, float* m, float* pixels) {
  const ConvDims& d = op.d;
  const std::int64_t mr = kernel.mr, nr = kernel.nr, panels = filter_panels(d, nr), ldm = plan.filters;
  const std::int64_t m_rows = round_up(rows, mr);
  const WinogradOutputFn output = vector_kernels().winograd_output;
  const BiasActivateChannelsFn finish = vector_kernels().bias_activate_channels;
  // Depth slices as deep as the GEMM's, as in conv2d_nhwc.cpp (Zen 4, against 128 deep: 256
  // channels +1-11 %, medians of 2 suites).
  const std::int64_t kc = max_depth_slice;
  for (int xi = 0; xi < points; ++xi) {
    const float* a = v + (xi * plan.chunk + first) * plan.lda;
    for (std::int64_t slice = 0; slice < d.c; slice += kc) {
      const std::int64_t depth = std::min(kc, d.c - slice);
      for (std::int64_t panel = 0; panel * nr < cols; ++panel) {
        const float* b = u + ((xi * panels + k0 / nr + panel) * d.c + slice) * nr;
        kernel.run_rows_a({.depth = depth, .a = a + slice, .lda = plan.lda, .b = b,
                           .c = m + xi * m_rows * ldm + panel * nr, .ldc = ldm, .tiles = m_rows / mr,
                           .cols = static_cast<int>(nr), .accumulate = slice > 0});
      }
    }
  }
  for (std::int64_t t = 0; t < rows; ++t) {
    // pixels: the tile's 16 outputs, [pixel][filter], ldm apart.
    output(m + t * ldm, m_rows * ldm, cols, pixels, ldm);
    const TileAt at = tile_at(plan, chunk_first + first + t);
    for (int e = 0; e < out_tile * out_tile; ++e) {
      const std::int64_t oh = at.oh + e / out_tile, ow = at.ow + e % out_tile;
      if (oh >= d.p || ow >= d.q) continue;
      const std::int64_t y_index = ((at.n * d.p + oh) * d.q + ow) * d.k + k0;
      finish(op.y.data() + y_index, pixels + e * ldm, op.residual ? op.residual + y_index : nullptr, cols,
             op.bias ? op.bias + k0 : nullptr, op.p.activation);
      op.y.commit(y_index, cols);
    }
  }
}

}  // namespace

// Measured on Zen 5 (1 and 2 threads, `git show 693fa6f:docs/benchmarks.md`): with fewer than 32 channels in or
// out the transforms cost more than the multiplies they save; with fewer than 9 tiles the
// transformed filters (4x the direct kernel's) stream from memory for too little work.
bool winograd_preferred(const ConvDims& d) {
  const std::int64_t tiles = d.n * ceil_div(d.p, out_tile) * ceil_div(d.q, out_tile);
  return d.c >= 32 && d.k >= 32 && tiles >= 9;
}

bool winograd_applies(const ConvDims& d, const Conv2dParams& p) {
  return d.layout == Layout::NHWC && d.groups == 1 && d.r == 3 && d.s == 3 && p.stride[0] == 1 && p.stride[1] == 1 &&
         p.dilation[0] == 1 && p.dilation[1] == 1;
}

WinogradFilters::WinogradFilters(const ConvDims& d, const float* w) {
  const std::int64_t nr = gemm_micro_kernel_for(d.k).nr;
  panels = aligned_floats(static_cast<std::size_t>(points * filter_panels(d, nr) * d.c * nr));
  transform_filters(d, w, nr, panels.get());
}

void conv_winograd(const ConvOperands& op, const WinogradFilters* filters) {
  const ConvDims& d = op.d;
  const MicroKernel& kernel = gemm_micro_kernel_for(d.k);
  const Plan plan = plan_for(d, kernel);
  const std::int64_t nr = kernel.nr, mr = kernel.mr;
  const auto transformed = gemm_scratch().acquire(static_cast<std::size_t>(filters ? 1 : points * filter_panels(d, nr) * d.c * nr));
  if (!filters) transform_filters(d, op.w, nr, transformed.data());
  const float* u = filters ? filters->panels.get() : transformed.data();
  const std::int64_t filter_blocks = ceil_div(d.k, plan.filters);
  // The phases nest in the loop over chunks: where there are many, each thread runs its own.
  tbb::parallel_for(std::int64_t{0}, ceil_div(plan.tiles, plan.chunk), [&](std::int64_t chunk) {
    const std::int64_t chunk_first = chunk * plan.chunk, count = std::min(plan.chunk, plan.tiles - chunk_first);
    const auto v = gemm_scratch().acquire(static_cast<std::size_t>(points * plan.chunk * plan.lda));
    transform_inputs(op, plan, chunk_first, count, v.data());
    // The rows up to the next whole micro-kernel tile are multiplied too (and dropped): zeros,
    // not whatever the scratch held.
    for (int xi = 0; xi < points; ++xi)
      std::fill(v.data() + (xi * plan.chunk + count) * plan.lda,
                v.data() + (xi * plan.chunk + round_up(count, mr)) * plan.lda, 0.0f);
    const std::int64_t tile_blocks = ceil_div(count, plan.block);
    tbb::parallel_for(std::int64_t{0}, tile_blocks * filter_blocks, [&](std::int64_t task) {
      const std::int64_t first = task / filter_blocks * plan.block, k0 = task % filter_blocks * plan.filters;
      const std::int64_t rows = std::min(plan.block, count - first), cols = std::min(plan.filters, d.k - k0);
      const auto m = gemm_scratch().acquire(static_cast<std::size_t>(points * round_up(rows, mr) * plan.filters));
      const auto pixels = gemm_scratch().acquire(static_cast<std::size_t>(out_tile * out_tile * plan.filters));
      multiply_and_finish(op, plan, kernel, u, v.data(), chunk_first, first, rows, k0, cols, m.data(), pixels.data());
    });
  });
}

}  // namespace porta::detail
