// Goto/BLIS shape. For each slice of kc depth and nc columns, op(B) is packed once into panels
// of nr columns that all threads share; C is then cut into tasks of rows x columns, each packing
// its rows of op(A) into panels of mr rows and sweeping the micro-kernel over them: a B panel
// stays in L1 and L2 across the A panels, the task's A block in L2, the shared B slice in L3.
// With few columns or few rows, an f32 A is read in place (its rows, or a transposed A's columns
// as a packed panel's), and a plain f32 B beside it too.
// Where a whole column slice of op(B) fits a quarter of L3, all its depth slices are packed at
// once and each task runs through them in turn, keeping its block of C and its A rows' streams.
// Where copies for every thread fit half of L3, each thread packs its own B, and where A is read
// in place and each thread has few rows, the threads split C's columns instead. Which of these
// apply is the plan's choice (backends/cpu/plans/gemm_plan.cpp), made before any work.
// Only kc decides how each element's sum is split, and kc is a constant, so results do not depend
// on the thread count; the task grid only spreads the work.
#include "backends/cpu/kernels/gemm_f32.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "backends/cpu/kernels/cache_sizes.hpp"
#include "backends/cpu/kernels/dtype_convert.hpp"
#include "backends/cpu/kernels/micro_kernel.hpp"
#include "backends/cpu/kernels/scratch_pool.hpp"
#include "backends/cpu/kernels/vector_kernels.hpp"
#include "core/runtime/plan_log.hpp"
#include "backends/cpu/plans/gemm_plan.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

// Largest micro-kernel tile, for the edge tiles computed in a local buffer.
constexpr std::int64_t max_tile = 16 * 64;

// Panel layout shared by the packers below: lanes [lane0, lane0 + lanes) x depth [p0, p0 + depth)
// of a matrix whose element (lane, p) is at data[lane * lane_stride + p * depth_stride] go into
// panels of `width` lanes, k-major inside a panel. A packs with its rows as lanes, B with its
// columns.
struct PanelSource {
  const std::byte* data;
  DType dtype;
  std::int64_t lane_stride, depth_stride, lane0, lanes, p0, depth;
};

// Lanes contiguous (lane_stride 1): each step of depth is one run across all the panels, read
// once and dealt out to them. Packed a panel at a time over the whole depth instead, each source
// row (a page of its own when depth strides over A's rows) is read once per panel: the transposed
// A of 1760x128x1760 spent a third of its time packing so, then a sixth. Dealt a step at a time,
// each store went to another panel; in blocks of 8 steps, a panel at a time, each panel's rows
// are written in a run, the next block's runs prefetched (1760x128x1760 TN, native ÷ oneDNN,
// 1 thread: AVX2 0.77 -> 0.91, AVX-512 0.96 -> 0.99). f32 runs are dealt in whole vectors
// (pack_panel.hpp).
void pack_lane_runs(const PanelSource& s, std::int64_t width, float* dst) {
  constexpr std::int64_t block = 8;
  const std::int64_t bytes = static_cast<std::int64_t>(size_of(s.dtype));
  const DealRunsFn deal_runs = vector_kernels().deal_runs;
  for (std::int64_t p = 0; p < s.depth; p += block) {
    const std::int64_t origin = s.lane0 + (s.p0 + p) * s.depth_stride, steps = std::min(block, s.depth - p);
    for (std::int64_t ahead = block; ahead < 2 * block && p + ahead < s.depth; ++ahead) {
      const std::byte* next = s.data + (origin + ahead * s.depth_stride) * bytes;
      for (std::int64_t b = 0; b < s.lanes * bytes; b += 64) __builtin_prefetch(next + b);
    }
    if (s.dtype == DType::f32) {
      deal_runs(reinterpret_cast<const float*>(s.data) + origin, s.depth_stride, steps, s.lanes, width, s.depth,
                p + steps == s.depth, dst + p * width);
      continue;
    }
    for (std::int64_t step = 0; step < steps; ++step)
      for (std::int64_t l0 = 0; l0 < s.lanes; l0 += width)
        widen_to_f32(s.data, s.dtype, origin + step * s.depth_stride + l0, std::min(width, s.lanes - l0),
                     dst + l0 * s.depth + (p + step) * width);
  }
}

// Lanes strided, so depth is contiguous (pack() makes one of the two strides 1) and each lane is
// a run: f32 lanes are transposed into the panel a vector block at a time (pack_panel.hpp); f16
// and bf16 convert a lane's depth at a time (f16 converts 16 lanes wide, f16_run.hpp).
void pack_strided_lanes(const PanelSource& s, std::int64_t width, float* dst) {
  const PackRowsFn pack_rows = vector_kernels().pack_rows;
  for (std::int64_t l0 = 0; l0 < s.lanes; l0 += width, dst += width * s.depth) {
    const std::int64_t used = std::min(width, s.lanes - l0);
    const std::int64_t origin = (s.lane0 + l0) * s.lane_stride + s.p0;
    if (s.dtype == DType::f32) {
      pack_rows(reinterpret_cast<const float*>(s.data) + origin, s.lane_stride, used, s.depth, width, dst);
    } else {
      std::array<float, max_depth_slice> run;
      for (std::int64_t i = 0; i < used; ++i) {
        widen_to_f32(s.data, s.dtype, origin + i * s.lane_stride, s.depth, run.data());
        for (std::int64_t p = 0; p < s.depth; ++p) dst[p * width + i] = run[p];
      }
    }
  }
}

// Packs `s` into panels of `width` lanes, zero-padding the last panel so the micro-kernel needs
// no edge case.
void pack_panels(const PanelSource& s, std::int64_t width, float* dst) {
  if (s.lanes <= 0) return;
  if (s.lane_stride == 1) {
    pack_lane_runs(s, width, dst);
  } else {
    pack_strided_lanes(s, width, dst);
  }
  const std::int64_t used = s.lanes % width;
  if (used == 0) return;
  float* last = dst + (s.lanes - used) * s.depth;
  for (std::int64_t p = 0; p < s.depth; ++p) std::fill(last + p * width + used, last + (p + 1) * width, 0.0f);
}

void pack(const GemmOperand& x, bool lanes_are_rows, std::int64_t lane0, std::int64_t lanes, std::int64_t p0,
          std::int64_t depth, std::int64_t width, float* dst) {
  // Rows of op(X) are rows of X unless transposed; A packs rows of op(A), B columns of op(B).
  const bool lane_is_memory_row = lanes_are_rows != x.trans;
  const std::int64_t lane_stride = lane_is_memory_row ? x.ld : 1;
  const std::int64_t depth_stride = lane_is_memory_row ? 1 : x.ld;
  pack_panels({x.data, x.dtype, lane_stride, depth_stride, lane0, lanes, p0, depth}, width, dst);
}

// Runs body(i) for i in [0, count): in parallel when `parallel`, else in order on this thread.
template <class Body>
void for_each_task(bool parallel, std::int64_t count, const Body& body) {
  if (!parallel || count == 1) {
    for (std::int64_t i = 0; i < count; ++i) body(i);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, count, 1),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      for (std::int64_t i = r.begin(); i != r.end(); ++i) body(i);
                    },
                    tbb::simple_partitioner());
}

// One mr x nr tile of C: compute(c, ldc, accumulate) is a micro-kernel call; edge tiles go
// through a local buffer, and so does a tile whose first `skip` rows are not C's (a last panel
// computed as the mr rows that end where it does).
template <class Compute>
void run_tile(const MicroKernel& kernel, float* c, std::int64_t ldc, std::int64_t rows, std::int64_t cols,
              bool accumulate, const Compute& compute, std::int64_t skip = 0) {
  if (rows == kernel.mr && cols == kernel.nr) return compute(c, ldc, accumulate);
  alignas(64) std::array<float, max_tile> tile;
  compute(tile.data(), kernel.nr, false);
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* src = tile.data() + (skip + i) * kernel.nr;
    float* dst = c + i * ldc;
    for (std::int64_t j = 0; j < cols; ++j) dst[j] = accumulate ? dst[j] + src[j] : src[j];
  }
}

// Few rows of C (a fully connected layer at batch 1, or a transposed B at a small batch): each
// element a dot product of a row of A with a column of op(B). Packing B, megabytes of weights, for
// a micro-kernel that would use few of its mr rows cost more than the product itself (ResNet-50's
// 2048x1000 layer at batch 1 ran at 2 GFLOP/s), so B is streamed once as it is stored: a
// transposed B's rows as dot products with A's rows (dot_tile.hpp), in chunks of columns that
// stay in L2 while each block of A's rows passes over them; for one row, a plain B's rows scaled
// and summed (gemv_rows.hpp). Each element is summed by one task, in a fixed order.
void few_rows(std::int64_t m, std::int64_t n, std::int64_t k, const GemmOperand& a, const GemmOperand& b, float* c,
              std::int64_t ldc, const GemmPlan& plan, const GemmEpilogue& epilogue) {
  const float* x = reinterpret_cast<const float*>(a.data);
  const float* w = reinterpret_cast<const float*>(b.data);
  const std::int64_t chunk = plan.chunk;
  const VectorKernels& kernels = vector_kernels();
  for_each_task(plan.parallel, ceil_div(n, chunk), [&](std::int64_t task) {
    const std::int64_t j0 = task * chunk, cols = std::min(chunk, n - j0);
    if (b.trans) {  // column j of op(B) is row j of B
      kernels.dot_tile(k, x, a.ld, m, w + j0 * b.ld, b.ld, cols, c + j0, ldc);
    } else {
      kernels.gemv_rows(k, x, w + j0, b.ld, cols, c + j0);
    }
    if (epilogue) epilogue({0, j0, m, cols});
  });
}

// C with few columns, A's rows f32 in place: dot products along k (dot_tile.hpp), op(B)'s
// columns read as rows of k: B itself when transposed, else a transposed copy (n x k floats; a
// plain loop: pack() into panels of one column, the same layout, halved 35x7x2560's speed).
// Tasks of row blocks; each element is summed by one task, in a fixed order.
void gemm_dot(std::int64_t m, std::int64_t n, std::int64_t k, const GemmOperand& a, const GemmOperand& b, float* c,
              std::int64_t ldc, const GemmPlan& plan, const GemmEpilogue& epilogue) {
  const float* x = reinterpret_cast<const float*>(a.data);
  const float* w = reinterpret_cast<const float*>(b.data);
  const auto copy = gemm_scratch().acquire(static_cast<std::size_t>(b.trans ? 0 : n * k));
  if (!b.trans)
    for (std::int64_t p = 0; p < k; ++p)
      for (std::int64_t j = 0; j < n; ++j) copy.data()[j * k + p] = w[p * b.ld + j];
  const float* bt = b.trans ? w : copy.data();
  const std::int64_t ldb = b.trans ? b.ld : k;
  const std::int64_t block = plan.chunk;
  const DotTileFn dot = vector_kernels().dot_tile;
  for_each_task(plan.parallel, ceil_div(m, block), [&](std::int64_t task) {
    const std::int64_t row0 = task * block, rows = std::min(block, m - row0);
    dot(k, x + row0 * a.ld, a.ld, rows, bt, ldb, n, c + row0 * ldc, ldc);
    if (epilogue) epilogue({row0, 0, rows, n});
  });
}

// Few rows beside a transposed f32 B (a fully connected layer's weights at a small batch), as the
// transposed product C^T = B op(A)^T: B's rows, megabytes of weights, are then A's rows read in
// place where they lie, and op(A), a few rows, becomes the narrow B; C^T lands in a copy that
// is transposed into C. Packing B (n x k) into panels cost a third of the time of 32x1000x2048.
// In even chunks of at most 4096 of C's columns, so that the copy stays small (at most 2 MiB) and
// each chunk has more columns than C has rows (a short last chunk would be transposed back).
void transposed_product(std::int64_t m, std::int64_t n, std::int64_t k, const GemmOperand& a, const GemmOperand& b,
                        float* c, std::int64_t ldc, const GemmPlan& plan, const GemmEpilogue& epilogue) {
  const std::int64_t chunk = plan.chunk, rows = plan.task_rows;
  const auto ct = gemm_scratch().acquire(static_cast<std::size_t>(chunk * m));
  for (std::int64_t j0 = 0; j0 < n; j0 += chunk) {
    const std::int64_t cols = std::min(chunk, n - j0);
    gemm_f32(cols, m, k, GemmOperand{b.data, b.dtype, b.ld, false}.offset(j0 * b.ld), {a.data, a.dtype, a.ld, !a.trans},
             ct.data(), m);
    for_each_task(plan.parallel, ceil_div(m, rows), [&](std::int64_t task) {
      const std::int64_t row0 = task * rows, count = std::min(rows, m - row0);
      // 64 of C^T's rows at a time, whose lines stay in L1 while C's rows take their columns.
      for (std::int64_t jb = 0; jb < cols; jb += 64) {
        const std::int64_t j_end = std::min(jb + 64, cols);
        for (std::int64_t i = row0; i < row0 + count; ++i)
          for (std::int64_t j = jb; j < j_end; ++j) c[i * ldc + j0 + j] = ct.data()[j * m + i];
      }
      if (epilogue) epilogue({row0, j0, count, cols});
    });
  }
}

// `rows` rows of `depth` floats, `ld` apart, into dst as a row-major block of `padded` rows
// (depth apart), the rows past `rows` zero.
void copy_rows(const float* src, std::int64_t ld, std::int64_t rows, std::int64_t depth, std::int64_t padded,
               float* dst) {
  if (rows <= 0) return;
  for (std::int64_t i = 0; i < rows; ++i) std::copy_n(src + i * ld, depth, dst + i * depth);
  std::fill(dst + rows * depth, dst + padded * depth, 0.0f);
}

void zero_fill(std::int64_t m, std::int64_t n, float* c, std::int64_t ldc, const GemmEpilogue& epilogue) {
  for (std::int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0.0f);
  if (epilogue) epilogue({0, 0, m, n});
}


// The blocked algorithm's operands, and what all its tasks share.
struct Blocked {
  const GemmPlan& plan;
  const MicroKernel& kernel;
  const KernelSet& set;
  std::int64_t m, n, k;
  const GemmOperand &a, &b;
  float* c;
  std::int64_t ldc;
  const GemmEpilogue& epilogue;
  float* b_pass;  // plan.b_copies() copies of a pass of packed B, pass * nc floats each
  const float* b_ahead;  // B packed ahead (PackedB::panels), or null
  // B's panels as the kernels read them: steps of k b.ld apart where B is in place. A last panel
  // of at most tail_nr columns runs on the kernel's narrower tail (README.md, `tail_nr`), which
  // reads the first tail_nr columns of the panel, in place or packed (its steps of k nr apart).
  Taps b_taps, tail_taps;
  MicroKernelFn run_in_place;  // the whole tiles of an A read in place
};

// A pass over depth [p0, p_end) of the column slice [jc, jc + slice_cols), in the tasks of `grid`.
// Packed B holds it as depth slices of kc, slice pc at (pc - p0) * nc.
struct Pass {
  std::int64_t jc, slice_cols, p0, p_end, slices;
  TaskGrid grid;
  // Where each thread packs its own B: which column chunks of this pass it has packed, a chunk's
  // depth slices being packing tasks [chunk * slices, (chunk + 1) * slices); a thread sets only its own.
  std::vector<char> packed;
};

// A task's block of C, and how its rows of A arrive.
struct Block {
  std::int64_t row0, rows, col0, cols;
  std::int64_t whole_rows, left;  // rows in whole tiles of kernel.mr, and those past them
  const MicroKernel& last;        // the kernel of the last panel of `left` rows
  bool last_shifted;              // that panel read in place as the last.mr rows that end where it does
  float* a_block;                 // packed A, or the copied last panel
};

// One depth slice of one panel of B's columns over a task's rows.
struct PanelCall {
  std::int64_t depth;
  const float* a_tiles;    // A's whole tiles in place, or null where packed
  const float* last_rows;  // the last panel's rows, copied or packed
  const float* b;
  float* c;
  std::int64_t cols;
  bool accumulate;
};

// Packing task `task` of a pass: one depth slice of one column chunk of B, into `panels`.
void pack_b(const Blocked& g, const Pass& pass, std::int64_t task, float* panels) {
  const std::int64_t nr = g.kernel.nr, kc = g.plan.kc;
  const std::int64_t first = task / pass.slices * pass.grid.chunk_panels * nr;
  const std::int64_t cols = std::min(pass.grid.chunk_panels * nr, pass.slice_cols - first);
  const std::int64_t pc = pass.p0 + task % pass.slices * kc, depth = std::min(kc, g.k - pc);
  pack(g.b, false, pass.jc + first, cols, pc, depth, nr, panels + (pc - pass.p0) * g.plan.nc + first * depth);
}

// The packed B that a task of column chunk `chunk` reads: the shared one, or the thread's own
// copy, into which the thread's first task of the chunk packs it.
const float* b_panels_for(const Blocked& g, Pass& pass, std::int64_t chunk) {
  if (g.plan.b_read == GemmBRead::packed_ahead) return g.b_ahead + pass.jc * g.k;
  if (g.plan.b_read != GemmBRead::own_panels) return g.b_pass;
  const auto slot = static_cast<std::int64_t>(tbb::this_task_arena::current_thread_index());
  float* copy = g.b_pass + slot * g.plan.pass * g.plan.nc;
  if (char& done = pass.packed[static_cast<std::size_t>(slot * pass.grid.col_chunks + chunk)]; !done) {
    for (std::int64_t task = chunk * pass.slices; task < (chunk + 1) * pass.slices; ++task) pack_b(g, pass, task, copy);
    done = 1;  // (once: flags written by every task would share a line)
  }
  return copy;
}

// The whole tiles of a panel (in place, in one call masked to the panel's columns), then its
// last panel of rows.
void run_panel(const Blocked& g, const Block& blk, const PanelCall& p) {
  const MicroKernel& kernel = g.kernel;
  const bool by_rows = g.plan.a_by_rows();
  if (g.plan.a_in_place()) {
    const bool tail = p.cols <= kernel.tail_nr;
    const MicroKernelFn run = !tail ? g.run_in_place : by_rows ? kernel.run_tail_rows_a : kernel.run_tail_columns_a;
    if (blk.whole_rows > 0)
      run({.depth = p.depth, .a = p.a_tiles, .lda = g.a.ld, .taps = tail ? g.tail_taps : g.b_taps, .b = p.b,
           .c = p.c, .ldc = g.ldc, .tiles = blk.whole_rows / kernel.mr, .cols = static_cast<int>(p.cols),
           .accumulate = p.accumulate});
  } else {
    for (std::int64_t i = 0; i < blk.whole_rows; i += kernel.mr)
      run_tile(kernel, p.c + i * g.ldc, g.ldc, kernel.mr, p.cols, p.accumulate,
               [&](float* tile, std::int64_t ld, bool accumulate) {
                 kernel.run_columns_a({.depth = p.depth, .a = blk.a_block + i * p.depth, .lda = kernel.mr,
                                       .taps = g.b_taps, .b = p.b, .c = tile, .ldc = ld,
                                       .cols = static_cast<int>(kernel.nr), .accumulate = accumulate});
               });
  }
  if (blk.left == 0) return;
  const MicroKernel& last = blk.last;
  const auto compute = [&](float* tile, std::int64_t ld, bool accumulate) {
    const MicroKernelFn run = by_rows ? last.run_rows_a : last.run_columns_a;
    const float* a_last = blk.last_shifted ? p.a_tiles + blk.rows - last.mr : p.last_rows;
    const std::int64_t lda = blk.last_shifted ? g.a.ld : by_rows ? p.depth : last.mr;
    run({.depth = p.depth, .a = a_last, .lda = lda, .taps = g.b_taps, .b = p.b, .c = tile, .ldc = ld,
         .cols = static_cast<int>(p.cols), .accumulate = accumulate});
  };
  run_tile(last, p.c + blk.whole_rows * g.ldc, g.ldc, blk.left, p.cols, p.accumulate, compute,
           blk.last_shifted ? last.mr - blk.left : 0);
}

// One depth slice [pc, pc + kc) of a task: A's rows made ready (in place, their ragged last panel
// copied by rows or packed by columns, padded with zero rows to the kernel that runs it; or all
// packed), then every panel of the task's columns.
void run_slice(const Blocked& g, const Pass& pass, const Block& blk, const float* b_panels, std::int64_t pc) {
  const std::int64_t depth = std::min(g.plan.kc, g.k - pc);
  const bool in_place = g.plan.a_in_place(), by_rows = g.plan.a_by_rows();
  const auto* a_f32 = reinterpret_cast<const float*>(g.a.data);
  const float* a_tiles = !in_place ? nullptr
                         : by_rows ? a_f32 + blk.row0 * g.a.ld + pc
                                   : a_f32 + pc * g.a.ld + blk.row0;
  float* last_rows = blk.a_block + (in_place ? 0 : blk.whole_rows * depth);
  if (by_rows) {
    copy_rows(a_tiles + blk.whole_rows * g.a.ld, g.a.ld, blk.left, depth, blk.last.mr, last_rows);
  } else {
    if (!in_place) pack(g.a, true, blk.row0, blk.whole_rows, pc, depth, g.kernel.mr, blk.a_block);
    if (!blk.last_shifted) pack(g.a, true, blk.row0 + blk.whole_rows, blk.left, pc, depth, blk.last.mr, last_rows);
  }
  const bool b_in_place = g.plan.b_read == GemmBRead::in_place;
  for (std::int64_t j = 0; j < blk.cols; j += g.kernel.nr) {
    const std::int64_t col = pass.jc + blk.col0 + j;
    const float* b_panel = b_in_place ? reinterpret_cast<const float*>(g.b.data) + pc * g.b.ld + col
                                      : b_panels + (pc - pass.p0) * g.plan.nc + (blk.col0 + j) * depth;
    run_panel(g, blk,
              {depth, a_tiles, last_rows, b_panel, g.c + blk.row0 * g.ldc + col, std::min(g.kernel.nr, blk.cols - j),
               pc > 0});
  }
}

void run_task(const Blocked& g, Pass& pass, std::int64_t task) {
  const TaskGrid& grid = pass.grid;
  const std::int64_t block = grid.block(task), chunk = grid.chunk(task), nr = g.kernel.nr;
  const float* b_panels = b_panels_for(g, pass, chunk);
  const std::int64_t row0 = grid.row0(block), rows = grid.rows(block);
  const std::int64_t col0 = chunk * grid.chunk_panels * nr;
  const std::int64_t cols = std::min(grid.chunk_panels * nr, pass.slice_cols - col0);
  const std::int64_t whole_rows = rows / g.kernel.mr * g.kernel.mr;
  // A last panel of few rows runs on a kernel of fewer rows where the set has one (README.md,
  // `last_panel`); by columns it is read in place too where A has last.mr rows up to its end (packed,
  // its runs of a few floats a step of k took a quarter of 24x24x4096 TN's time).
  const MicroKernel& last = g.set.for_last_panel(g.kernel, rows - whole_rows);
  const bool last_shifted = g.plan.a_read == GemmARead::columns && row0 + rows >= last.mr;
  const auto a_block = gemm_scratch().acquire(static_cast<std::size_t>(grid.max_rows() * g.plan.kc));
  const Block blk{row0, rows, col0, cols, whole_rows, rows - whole_rows, last, last_shifted, a_block.data()};
  for (std::int64_t pc = pass.p0; pc < pass.p_end; pc += g.plan.kc) run_slice(g, pass, blk, b_panels, pc);
  if (pass.p_end == g.k && g.epilogue) g.epilogue({row0, pass.jc + col0, rows, cols});
}

// Column slices of nc, each in passes of plan.pass deep: B packed (unless in place or packed by
// each thread for itself) in a task per chunk of panels and depth slice, so that a GEMM with few
// columns (one chunk) does not pack all its depth on one thread; then the tasks of the grid.
void run_blocked(const GemmPlan& plan, std::int64_t m, std::int64_t n, std::int64_t k, const GemmOperand& a,
                 const GemmOperand& b, float* c, std::int64_t ldc, const GemmEpilogue& epilogue,
                 const float* b_ahead) {
  const MicroKernel& kernel = *plan.kernel;
  const bool b_in_place = plan.b_read == GemmBRead::in_place;
  const auto b_pass = gemm_scratch().acquire(static_cast<std::size_t>(plan.b_copies() * plan.pass * plan.nc));
  const MicroKernelFn run_in_place = plan.a_read == GemmARead::columns         ? kernel.run_columns_a
                                     : plan.a_read == GemmARead::rows_streamed ? kernel.run_streamed_a
                                                                               : kernel.run_rows_a;
  const Blocked g{plan, kernel, kernel_set(kernel.isa), m, n, k, a, b, c, ldc, epilogue, b_pass.data(), b_ahead,
                  Taps{no_shift, 1, 0, b_in_place ? b.ld : 0}, Taps{no_shift, 1, 0, b_in_place ? b.ld : kernel.nr},
                  run_in_place};
  for (std::int64_t jc = 0; jc < n; jc += plan.nc) {
    const std::int64_t slice_cols = std::min(plan.nc, n - jc);
    const TaskGrid grid = gemm_task_grid(plan, m, ceil_div(slice_cols, kernel.nr));
    for (std::int64_t p0 = 0; p0 < k; p0 += plan.pass) {
      const std::int64_t p_end = std::min(p0 + plan.pass, k);
      Pass pass{jc, slice_cols, p0, p_end, ceil_div(p_end - p0, plan.kc), grid,
                std::vector<char>(static_cast<std::size_t>(plan.b_copies() * grid.col_chunks))};
      if (plan.b_read == GemmBRead::shared_panels)
        for_each_task(plan.parallel, grid.col_chunks * pass.slices,
                      [&](std::int64_t task) { pack_b(g, pass, task, g.b_pass); });
      for_each_task(plan.parallel, grid.tasks(), [&](std::int64_t task) { run_task(g, pass, task); });
    }
  }
}

bool packed_for(const GemmPlan& plan, const PackedB& packed) {
  return plan.kernel->nr == packed.nr && plan.kc == packed.kc && plan.nc == packed.nc;
}

}  // namespace

// Each column slice and depth slice a task, into the place where run_blocked reads it.
PackedB pack_b_ahead(const GemmShape& shape, const GemmOperand& b) {
  if (shape.m <= 0 || shape.n <= 0) return {};
  GemmShape ahead = shape;
  ahead.b_packed = true;
  const GemmPlan plan = plan_gemm(ahead, host_machine());
  if (plan.algorithm != GemmAlgorithm::blocked) return {};
  PackedB packed{plan.kernel->nr, plan.kc, plan.nc, {}};
  const std::int64_t n = shape.n, k = shape.k, slices = ceil_div(k, plan.kc);
  packed.panels.resize(static_cast<std::size_t>(ceil_div(n, plan.nc) * plan.nc * k));
  tbb::parallel_for(std::int64_t{0}, ceil_div(n, plan.nc) * slices, [&](std::int64_t task) {
    const std::int64_t jc = task / slices * plan.nc, pc = task % slices * plan.kc;
    pack(b, false, jc, std::min(plan.nc, n - jc), pc, std::min(plan.kc, k - pc), packed.nr,
         packed.panels.data() + jc * k + pc * plan.nc);
  });
  return packed;
}

void gemm_f32(std::int64_t m, std::int64_t n, std::int64_t k, const GemmOperand& a, const GemmOperand& b, float* c,
              std::int64_t ldc, const GemmEpilogue& epilogue, const PackedB* packed_b) {
  if (m <= 0 || n <= 0) return;
  const bool ahead = packed_b != nullptr && !packed_b->panels.empty();
  GemmShape shape{m, n, k, a.dtype, b.dtype, a.ld, b.ld, a.trans, b.trans, ahead};
  GemmPlan plan = plan_gemm(shape, host_machine());
  if (plan.b_read == GemmBRead::packed_ahead && !packed_for(plan, *packed_b)) {
    shape.b_packed = false;  // packed for another plan (another thread count): B is packed here
    plan = plan_gemm(shape, host_machine());
  }
  if (plans_wanted()) note_plan("cpu", describe(shape), describe(plan));
  switch (plan.algorithm) {
    case GemmAlgorithm::zero_fill: return zero_fill(m, n, c, ldc, epilogue);
    case GemmAlgorithm::few_rows: return few_rows(m, n, k, a, b, c, ldc, plan, epilogue);
    case GemmAlgorithm::transposed_product: return transposed_product(m, n, k, a, b, c, ldc, plan, epilogue);
    case GemmAlgorithm::dot: return gemm_dot(m, n, k, a, b, c, ldc, plan, epilogue);
    case GemmAlgorithm::blocked:
      return run_blocked(plan, m, n, k, a, b, c, ldc, epilogue, ahead ? packed_b->panels.data() : nullptr);
  }
}

}  // namespace porta::detail
