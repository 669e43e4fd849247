// Goto/BLIS shape. For each slice of kc depth and nc columns, op(B) is packed once into panels
// of nr columns that all threads share; C is then cut into tasks of rows x columns, each packing
// its rows of op(A) into panels of mr rows and sweeping the micro-kernel over them: a B panel
// stays in L1 and L2 across the A panels, the task's A block in L2, the shared B slice in L3.
// With few columns or few rows, an f32 A is read in place (its rows, or a transposed A's columns
// as a packed panel's), and a plain f32 B beside it too.
// Where a whole column slice of op(B) fits a quarter of L3, all its depth slices are packed at
// once and each task runs through them in turn, keeping its block of C and its A rows' streams.
// Where copies for every thread fit half of L3, each thread packs its own B (see gemm_f32), and
// where A is read in place and each thread has few rows, the threads split C's columns instead.
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
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

// Below this many multiply-adds a GEMM runs on the calling thread: waking threads costs more
// (64x64x64 on 2 threads took twice as long as on one; 128x128x128 gains a little).
constexpr std::int64_t parallel_threshold = std::int64_t{1} << 20;
// Up to this many columns of C, packing A costs more than reading it in place, where it is f32
// (measured on Zen 5 with its rows in place: in place wins up to 512 columns, loses from 1024).
constexpr std::int64_t in_place_a_max_cols = 512;
// Up to this many rows of C per thread, A is read in place whatever C's columns, and B with it
// (b_in_place_max_cols): packing B, megabytes of weights, for a few rows of work (a classifier
// at batch 8) cost more than the product (1 thread, GFLOP/s: 8x1000x2048 73 -> 175, 128x1000x2048
// 166 -> 181; but 192x2048x1024 172 -> 153; 2 threads 32x1000x2048 113 -> 314).
constexpr std::int64_t in_place_max_rows = 128;
// Up to this many columns of C, with A's rows f32 in place and B f32, dot products along k beat
// the micro-kernels, whose narrowest tile has 16 columns (Zen 5, 1 thread: 3072x4x1024 2.8x as
// fast with AVX-512, 2.6x with AVX2, 15x portable; 2048x8x2048 +5-30 %, +20 %, 6x; 2048x16x2048
// ran at half speed).
constexpr std::int64_t dot_max_cols = 8;
// Up to this many rows of C, with B transposed (a fully connected layer's weights), each element
// is a dot product along k of rows of A and B as they lie (few_rows): 1 thread, GFLOP/s,
// 8x1000x2048 56 -> 116, 16x1000x2048 87 -> 114, but 32x1000x2048 123 -> 115; 2 threads, 8 and 16
// rows 93 -> 207 and 62 -> 204. Not per thread (2 threads: 32 rows 115 -> 206): the sums' order
// would then depend on the thread count.
constexpr std::int64_t dot_max_rows = 16;
// Up to this many rows of C beside a transposed f32 B of more than half of L2, and more columns
// than rows, C^T = B op(A)^T is computed instead (transposed_product; few_rows takes up to 16 rows
// where A's rows are f32). 1 thread, GFLOP/s: 32x1000x2048 117 -> 197, 128x1000x2048 160 -> 199;
// 256 rows level, 512x1024x1024 -5 %, 1024x2048x1024 212 -> 130.
constexpr std::int64_t transposed_max_rows = 128;
// Rows of C per thread from which each thread may pack the whole of op(B) for itself: the copies
// then cost each thread at most 1/8 of its multiply-adds, less than reading a B that the other
// core packed (2 threads, from 64 rows a thread down to 8, GFLOP/s: 100x40x500 NT 106 -> 185,
// 64x64x1024 NT 139 -> 239, 40x200x300 NT 84 -> 217, 96x96x2048 NT 203 -> 305, 24x24x4096 NT
// 51 -> 110).
constexpr std::int64_t own_b_min_rows = 8;
// Rows of C per thread up to which threads that read A in place, and B too or their own copy of
// it, take a share of C's columns rather than of its rows (see gemm_f32).
constexpr std::int64_t split_columns_max_rows = 256;
// Up to this many columns of C, a plain f32 B is read in place where A is, rather than packed;
// wider, only where each thread has few rows (split_columns_max_rows). Packing cost a small GEMM
// much of its time (1 thread, GFLOP/s: 64^3 148 -> 171, 60x512x512 175 -> 210) and each thread
// a copy of all of B (2 threads: 120x512x512 179 -> 337, 33x128x1760 98 -> 285). A panel read in
// place, nr wide at a stride of N, falls into fewer of L1's sets than a packed one, which pays
// for itself across many rows of A (3072x512x512, 1 thread: 5 % slower in place).
constexpr std::int64_t b_in_place_max_cols = 256;
// Largest micro-kernel tile, for the edge tiles computed in a local buffer.
constexpr std::int64_t max_tile = 16 * 64;

// Measured on Zen 5 (48 KiB L1, 1 MiB L2) against smaller choices: a deep kc halves the passes
// over C, which cost more than keeping the B panel in L1 (per step of k the kernel reads 128
// bytes of it against 14 broadcasts of A, which L2 keeps up with). 512 rather than the 384 whose
// B panel fills L1: 1024^3-4096^3 2-7 % faster, 7680x32x2560 5 %.
struct Blocking {
  std::int64_t kc;      // depth of a packed slice
  std::int64_t mc_max;  // rows of a task: its kc x mc A block fills a quarter of L2
  std::int64_t nc;      // columns of a shared B slice: kc x nc fills a quarter of L3
};

Blocking blocking_for(const MicroKernel& kernel) {
  const CacheSizes& cache = host_cache_sizes();
  const std::int64_t bytes = sizeof(float);
  const std::int64_t kc = max_depth_slice;
  const std::int64_t mc = std::clamp(cache.l2 / 4 / (kc * bytes) / kernel.mr * kernel.mr, kernel.mr, 64 * kernel.mr);
  const std::int64_t nc = std::clamp(cache.l3 / 4 / (kc * bytes) / kernel.nr * kernel.nr, kernel.nr, 128 * kernel.nr);
  return {kc, mc, nc};
}

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

// How C's rows and a B slice's panels are cut into tasks: row blocks of whole mr panels (at most
// mc_max rows), as even as whole panels allow, and when rows alone give too few tasks for the
// threads, column chunks of whole nr panels. Split by columns, a chunk for each thread of at
// least two panels, whose row blocks run one after another (chunk-major), so that a thread's
// range of tasks keeps to one chunk.
struct TaskGrid {
  std::int64_t mr, m, row_panels, row_blocks;
  std::int64_t chunk_panels, col_chunks;
  bool chunk_major;

  std::int64_t block(std::int64_t task) const { return chunk_major ? task % row_blocks : task / col_chunks; }
  std::int64_t chunk(std::int64_t task) const { return chunk_major ? task / row_blocks : task % col_chunks; }
  std::int64_t row0(std::int64_t block) const { return block * row_panels / row_blocks * mr; }
  std::int64_t rows(std::int64_t block) const { return std::min(row0(block + 1), m) - row0(block); }
  std::int64_t max_rows() const { return ceil_div(row_panels, row_blocks) * mr; }
};

TaskGrid task_grid(std::int64_t m, std::int64_t slice_panels, const MicroKernel& kernel, const Blocking& blocking,
                   int threads, bool split_columns) {
  const std::int64_t row_panels = ceil_div(m, kernel.mr);
  // A few tasks per thread even up to mc_max rows, so that a busy core does not hold up the rest,
  // and a multiple of the threads (2560x64x2560 in 11 blocks left one of two threads 5 of them).
  const std::int64_t wanted = threads > 1 ? 4 * std::int64_t{threads} : 1;
  const std::int64_t least_blocks = ceil_div(m, blocking.mc_max);
  // Split by columns, no more row blocks than mc_max asks for: in four a chunk, 128^3 ran at 217
  // GFLOP/s on 2 threads, in one at 259.
  if (split_columns && slice_panels >= 2 * threads) {
    const std::int64_t chunk_panels = ceil_div(slice_panels, threads);
    return {kernel.mr, m, row_panels, least_blocks, chunk_panels, ceil_div(slice_panels, chunk_panels), true};
  }
  const std::int64_t blocks = ceil_div(std::max(least_blocks, wanted), threads) * threads;
  const std::int64_t row_blocks = std::min(row_panels, blocks);
  const std::int64_t col_chunks = std::clamp(ceil_div(wanted, row_blocks), std::int64_t{1}, slice_panels);
  const std::int64_t chunk_panels = ceil_div(slice_panels, col_chunks);
  return {kernel.mr, m, row_panels, row_blocks, chunk_panels, ceil_div(slice_panels, chunk_panels), false};
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
              std::int64_t ldc, bool parallel, const GemmEpilogue& epilogue) {
  const float* x = reinterpret_cast<const float*>(a.data);
  const float* w = reinterpret_cast<const float*>(b.data);
  const int threads = tbb::this_task_arena::max_concurrency();
  std::int64_t chunk = parallel ? ceil_div(ceil_div(n, 4 * std::int64_t{threads}), 16) * 16 : n;
  const std::int64_t l2_cols = host_cache_sizes().l2 / 4 / (k * std::int64_t{sizeof(float)}) / 16 * 16;
  if (m > 1) chunk = std::min(chunk, std::max(std::int64_t{16}, l2_cols));
  const VectorKernels& kernels = vector_kernels();
  for_each_task(parallel, ceil_div(n, chunk), [&](std::int64_t task) {
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
              std::int64_t ldc, bool parallel, const GemmEpilogue& epilogue) {
  const float* x = reinterpret_cast<const float*>(a.data);
  const float* w = reinterpret_cast<const float*>(b.data);
  const auto copy = gemm_scratch().acquire(static_cast<std::size_t>(b.trans ? 0 : n * k));
  if (!b.trans)
    for (std::int64_t p = 0; p < k; ++p)
      for (std::int64_t j = 0; j < n; ++j) copy.data()[j * k + p] = w[p * b.ld + j];
  const float* bt = b.trans ? w : copy.data();
  const std::int64_t ldb = b.trans ? b.ld : k;
  const int threads = tbb::this_task_arena::max_concurrency();
  // A few blocks of whole 4-row groups per thread.
  const std::int64_t block = parallel ? ceil_div(ceil_div(m, 4 * std::int64_t{threads}), 4) * 4 : m;
  const DotTileFn dot = vector_kernels().dot_tile;
  for_each_task(parallel, ceil_div(m, block), [&](std::int64_t task) {
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
                        float* c, std::int64_t ldc, bool parallel, const GemmEpilogue& epilogue) {
  const std::int64_t chunk = ceil_div(n, ceil_div(n, 4096));
  const auto ct = gemm_scratch().acquire(static_cast<std::size_t>(chunk * m));
  const std::int64_t rows = parallel ? ceil_div(m, std::int64_t{tbb::this_task_arena::max_concurrency()}) : m;
  for (std::int64_t j0 = 0; j0 < n; j0 += chunk) {
    const std::int64_t cols = std::min(chunk, n - j0);
    gemm_f32(cols, m, k, GemmOperand{b.data, b.dtype, b.ld, false}.offset(j0 * b.ld), {a.data, a.dtype, a.ld, !a.trans},
             ct.data(), m);
    for_each_task(parallel, ceil_div(m, rows), [&](std::int64_t task) {
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

}  // namespace

void gemm_f32(std::int64_t m, std::int64_t n, std::int64_t k, const GemmOperand& a, const GemmOperand& b, float* c,
              std::int64_t ldc, const GemmEpilogue& epilogue) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) return zero_fill(m, n, c, ldc, epilogue);
  const int threads = tbb::this_task_arena::max_concurrency();
  const bool parallel = threads > 1 && m * n * k >= parallel_threshold;
  // (A's one row is contiguous unless transposed with a row stride, which matmul never passes.)
  const bool a_rows = a.dtype == DType::f32 && (!a.trans || (m == 1 && a.ld == 1));
  if (a_rows && b.dtype == DType::f32 && (m == 1 || (b.trans && m <= dot_max_rows)))
    return few_rows(m, n, k, a, b, c, ldc, parallel, epilogue);
  if (b.trans && b.dtype == DType::f32 && m <= transposed_max_rows && n > m &&
      n * k * std::int64_t{sizeof(float)} > host_cache_sizes().l2 / 2)
    return transposed_product(m, n, k, a, b, c, ldc, parallel, epilogue);
  if (a.dtype == DType::f32 && !a.trans && b.dtype == DType::f32 && n <= dot_max_cols)
    return gemm_dot(m, n, k, a, b, c, ldc, parallel, epilogue);
  const int task_threads = parallel ? threads : 1;
  // An f32 A is read where it lies: by rows, or transposed by columns, its steps of k a row of its
  // storage apart as a packed panel's are mr apart (ARead; TN, GFLOP/s, 1 thread: 64x64x1024
  // 167 -> 214, 2048x32x2048 138 -> 205, 2000x48x2000 155 -> 197; 2 threads: 64x64x1024 111 ->
  // 274, 2048x32x2048 279 -> 399); but packed where, transposed, it comes from memory, not L3 (4096x16x4096 TN: 83 GFLOP/s
  // packed, 58 by columns, each step of k a line in another page).
  const bool a_from_memory = m * k * std::int64_t{sizeof(float)} > host_cache_sizes().l3 / 2;
  const bool a_in_place = a.dtype == DType::f32 && (!a.trans || !a_from_memory) &&
                          (n <= in_place_a_max_cols || m <= in_place_max_rows * task_threads);
  const bool a_by_rows = a_in_place && !a.trans;
  // A's rows read in place are mr streams `ld` floats apart; where more of them fall into one L1
  // set than it has ways (2048x16x2048 ran at a third of the speed of 1760x16x1760; 512x16x512,
  // 28 rows in two sets, at three quarters), a kernel with fewer rows reads them. So too for C of
  // at most 16 columns where L1 is under 48 KiB: there AVX-512's 28-row narrow kernel ran slower
  // than its 8-row one whatever the stride (Zen 4, 32 KiB, native ÷ oneDNN, 1 thread and 2, 2-4
  // turns: 8448x16x2816, 7 rows a set, 0.60 -> 1.03 and 0.59 -> 1.02; 1760x16x1760 0.93 -> 0.98
  // and 0.94 -> 0.98, 600x16x600 0.96 -> 1.02 and 0.94 -> 1.05, 300x16x300 2 threads 0.99 ->
  // 1.16; 4000x16x500 1.00 -> 0.98), where on Zen 5's 48 KiB it ran 1760x16x1760 at 1.08-1.12.
  // Why is not established: slices of 256 rather than 512 (B's slice then fits L1) and
  // prefetching the rows ahead did not help; the L1 size stands in for the cause.
  const MicroKernel& plain = gemm_micro_kernel_for(n);
  const bool narrow_on_small_l1 = plain.nr < gemm_micro_kernel().nr && host_cache_sizes().l1 < (48 << 10);
  // An A read in place that comes from memory, not L3, is streamed (ARead): 1 thread, against the
  // faster of oneDNN and OpenBLAS, 4096x16x4096 0.97 -> 1.17, 7680x32x2560 0.95 -> 1.20,
  // 4096x128x4096 0.96 -> 1.10. From L3 that was level on 1 thread and 2-8 % slower on 2
  // (1760x16x1760, 1760x128x1760).
  const bool streamed = a_by_rows && a_from_memory;
  const bool fewer_rows = a_by_rows && (narrow_on_small_l1 || rows_alias_in_l1(plain.mr, a.ld));
  const MicroKernel& kernel = gemm_kernel_for(n, a_in_place, fewer_rows, streamed);
  const MicroKernelFn run_in_place =
      !a_by_rows ? kernel.run_columns_a : streamed ? kernel.run_streamed_a : kernel.run_rows_a;
  const Blocking blocking = blocking_for(kernel);
  const std::int64_t nc = std::min(blocking.nc, ceil_div(n, kernel.nr) * kernel.nr);
  const std::int64_t kc = std::min(blocking.kc, k);
  // A plain f32 B is read where it lies, its rows b.ld apart, where A is too (b_in_place_max_cols).
  const bool b_in_place = a_in_place && b.dtype == DType::f32 && !b.trans &&
                          (n <= b_in_place_max_cols || m <= split_columns_max_rows * task_threads);
  // Where a column slice of op(B) packs whole into a quarter of L3 (GEMMs with few columns), it is
  // packed at once and each task runs through the whole depth, as where B is read in place: two
  // parallel regions (one where each thread packs its own B, below), not two per depth slice,
  // each of whose joins waits for the slowest thread.
  const bool whole_depth = b_in_place || k * nc * std::int64_t{sizeof(float)} <= host_cache_sizes().l3 / 4;
  const std::int64_t pass = whole_depth ? k : kc;
  // A B that one thread packs and the others read crosses between the cores' caches on every call,
  // and each repacking waits for the copies in the other cores to be invalidated (a 256 KB buffer
  // so shared took 2.4x as long to rewrite, Zen 5). Where copies for every thread fit half of L3,
  // each thread packs the pass for itself instead, each column chunk in the first task that reads
  // it, into the copy of its slot in the arena (2 threads, native ÷ the faster of oneDNN and
  // OpenBLAS: 128^3 0.73 -> 1.09, 256^3 0.58 -> 0.95, 512^3 0.85 -> 1.03, 512x16x512 NT 0.94 ->
  // 1.07; DeepBench shapes whose A fits L3 level to 5 % faster; packed a depth slice at a time,
  // 2048^3 1.00 -> 1.07, 4096^3 1.04 -> 1.07).
  const bool b_per_thread = parallel && m >= own_b_min_rows * threads &&
                            threads * pass * nc * std::int64_t{sizeof(float)} <= host_cache_sizes().l3 / 2;
  const bool own_b = b_per_thread && !b_in_place;
  // Split by rows, every thread packs all of B for a few rows of work; where A is read in place
  // and each thread's share of rows is small, the threads split the columns instead, each packing
  // (or reading) only its own and all of A where it lies (2 threads, median ms: 256^3 0.098 -> 0.087,
  // 512^3 0.678 -> 0.635, 256x512x256 0.197 -> 0.167; 128^3 229 -> 256 GFLOP/s). Split so with
  // 320 rows a thread, 640x160x640 ran 5 % slower, and with one panel each, 512x64x512 5 %. With
  // B in place too, whatever the rows: in row blocks of one tile, each thread read every B panel
  // for 14 rows (2 threads, GFLOP/s: 35x8457x1760 122 -> 244, 64x2048x256 335 -> 427,
  // 120x512x512 372 -> 431, 33x128x1760 337 -> 383).
  const bool split_columns =
      parallel && a_in_place && (own_b || b_in_place) && m <= split_columns_max_rows * threads;
  const std::int64_t b_copies = b_in_place ? 0 : own_b ? threads : 1;
  const Taps b_taps{no_shift, 1, 0, b_in_place ? b.ld : 0};
  // Beside an A read in place, a last panel of at most tail_nr columns runs on the kernel's
  // narrower tail where it has one (AVX-512's 14x16 and 8x16), which reads the first tail_nr
  // columns of the panel, in place or packed (its steps of k nr apart), rather than a tile of
  // mostly zeros (Zen 5, 1 thread: 1760x80x1760 +13 %, 1500x72x1500 +15 %, 2048x80x2048 +19 %,
  // 1000x100x1000 +8 %; A transposed, by columns, 1760x80x1760 +17 %, 1500x72x1500 +14 %).
  const Taps tail_taps{no_shift, 1, 0, b_in_place ? b.ld : kernel.nr};
  const auto b_pass = gemm_scratch().acquire(static_cast<std::size_t>(b_copies * pass * nc));

  for (std::int64_t jc = 0; jc < n; jc += nc) {
    const std::int64_t slice_cols = std::min(nc, n - jc);
    const std::int64_t slice_panels = ceil_div(slice_cols, kernel.nr);
    const TaskGrid grid = task_grid(m, slice_panels, kernel, blocking, task_threads, split_columns);
    for (std::int64_t p0 = 0; p0 < k; p0 += pass) {
      const std::int64_t p_end = std::min(p0 + pass, k);
      // B packs as depth slices of kc, slice pc at (pc - p0) * nc, a task per chunk of panels and
      // depth slice: with one task per chunk, a GEMM with few columns (one chunk) packed all its
      // depth on one thread while the others waited (1760x64x1760 and 1024^3 on 2 threads: 1-3 %).
      const std::int64_t slices = ceil_div(p_end - p0, kc), b_tasks = grid.col_chunks * slices;
      const auto pack_b = [&](std::int64_t task, float* pass_panels) {
        const std::int64_t first = task / slices * grid.chunk_panels * kernel.nr;
        const std::int64_t cols = std::min(grid.chunk_panels * kernel.nr, slice_cols - first);
        const std::int64_t pc = p0 + task % slices * kc, depth = std::min(kc, k - pc);
        pack(b, false, jc + first, cols, pc, depth, kernel.nr, pass_panels + (pc - p0) * nc + first * depth);
      };
      // Which column chunks of this pass each thread has packed into its own copy (own_b), a
      // chunk's depth slices being b_tasks [chunk * slices, (chunk + 1) * slices); each thread
      // sets only its own flags.
      std::vector<char> packed(static_cast<std::size_t>(b_copies * grid.col_chunks));
      if (!own_b && !b_in_place)
        for_each_task(parallel, b_tasks, [&](std::int64_t task) { pack_b(task, b_pass.data()); });
      for_each_task(parallel, grid.row_blocks * grid.col_chunks, [&](std::int64_t task) {
        const std::int64_t block = grid.block(task), chunk = grid.chunk(task);
        const float* b_panels = b_pass.data();
        if (own_b) {
          const auto slot = static_cast<std::int64_t>(tbb::this_task_arena::current_thread_index());
          float* copy = b_pass.data() + slot * pass * nc;
          if (char& done = packed[static_cast<std::size_t>(slot * grid.col_chunks + chunk)]; !done) {
            for (std::int64_t b_task = chunk * slices; b_task < (chunk + 1) * slices; ++b_task) pack_b(b_task, copy);
            done = 1;  // (once: flags written by every task would share a line)
          }
          b_panels = copy;
        }
        const std::int64_t row0 = grid.row0(block), rows = grid.rows(block);
        const std::int64_t col0 = chunk * grid.chunk_panels * kernel.nr;
        const std::int64_t cols = std::min(grid.chunk_panels * kernel.nr, slice_cols - col0);
        // In place, A's whole tiles feed the micro-kernel directly, and a ragged last panel is
        // copied (by rows) or packed (by columns), padded with zero rows to the kernel that runs it.
        const std::int64_t whole_rows = rows / kernel.mr * kernel.mr;
        // A last panel of few rows runs on a kernel of fewer rows where the instruction set has one
        // (AVX-512's of 8 and 4): computed as a tile of 14, 256x256x256's last 4 rows took longer
        // than a whole tile (252 rows 0.150 ms, 256 rows 0.161, 266 rows 0.158; Zen 5, 1 thread);
        // on 8 rows, 64^3 139 -> 156 GFLOP/s, 128^3 186 -> 193; on 4, 256^3 0.158 -> 0.156 ms,
        // 60x512x512 0.191 -> 0.178.
        const MicroKernel& last = gemm_last_panel_kernel(kernel, rows - whole_rows);
        // By columns, the last panel is read in place too, as the last.mr rows that end where it
        // does, where A has that many: packed, its runs of a few floats a step of k took a quarter
        // of 24x24x4096 TN's time.
        const std::int64_t left = rows - whole_rows;
        const bool last_shifted = a_in_place && !a_by_rows && row0 + rows >= last.mr;
        const auto a_block = gemm_scratch().acquire(static_cast<std::size_t>(grid.max_rows() * kc));
        for (std::int64_t pc = p0; pc < p_end; pc += kc) {
          const std::int64_t depth = std::min(kc, k - pc);
          const auto* a_f32 = reinterpret_cast<const float*>(a.data);
          const float* a_tiles = !a_in_place ? nullptr
                                 : a_by_rows ? a_f32 + row0 * a.ld + pc
                                             : a_f32 + pc * a.ld + row0;
          float* last_rows = a_block.data() + (a_in_place ? 0 : whole_rows * depth);  // the last panel's
          if (a_by_rows) {
            copy_rows(a_tiles + whole_rows * a.ld, a.ld, left, depth, last.mr, last_rows);
          } else {
            if (!a_in_place) pack(a, true, row0, whole_rows, pc, depth, kernel.mr, a_block.data());
            if (!last_shifted) pack(a, true, row0 + whole_rows, left, pc, depth, last.mr, last_rows);
          }
          for (std::int64_t j = 0; j < cols; j += kernel.nr) {
            const std::int64_t col = jc + col0 + j;
            const float* b_panel = b_in_place ? reinterpret_cast<const float*>(b.data) + pc * b.ld + col
                                              : b_panels + (pc - p0) * nc + (col0 + j) * depth;
            float* c_panel = c + row0 * ldc + col;
            const std::int64_t panel_cols = std::min(kernel.nr, cols - j);
            if (a_in_place) {  // the whole tiles in one call, masked to the panel's columns
              const bool tail = panel_cols <= kernel.tail_nr;
              const MicroKernelFn run = !tail      ? run_in_place
                                        : a_by_rows ? kernel.run_tail_rows_a
                                                    : kernel.run_tail_columns_a;
              if (whole_rows > 0)
                run(depth, a_tiles, a.ld, tail ? tail_taps : b_taps, b_panel, c_panel, ldc, whole_rows / kernel.mr,
                    static_cast<int>(panel_cols), pc > 0, nullptr);
            } else {
              for (std::int64_t i = 0; i < whole_rows; i += kernel.mr)
                run_tile(kernel, c_panel + i * ldc, ldc, kernel.mr, panel_cols, pc > 0,
                         [&](float* tile, std::int64_t ld, bool accumulate) {
                           kernel.run_columns_a(depth, a_block.data() + i * depth, kernel.mr, b_taps, b_panel, tile,
                                                ld, 1, static_cast<int>(kernel.nr), accumulate, nullptr);
                         });
            }
            if (left > 0)
              run_tile(
                  last, c_panel + whole_rows * ldc, ldc, left, panel_cols, pc > 0,
                  [&](float* tile, std::int64_t ld, bool accumulate) {
                    const MicroKernelFn run = a_by_rows ? last.run_rows_a : last.run_columns_a;
                    const float* a_last = last_shifted ? a_tiles + rows - last.mr : last_rows;
                    const std::int64_t lda = last_shifted ? a.ld : a_by_rows ? depth : last.mr;
                    run(depth, a_last, lda, b_taps, b_panel, tile, ld, 1, static_cast<int>(panel_cols), accumulate,
                        nullptr);
                  },
                  last_shifted ? last.mr - left : 0);
          }
        }
        if (p_end == k && epilogue) epilogue({row0, jc + col0, rows, cols});
      });
    }
  }
}

}  // namespace porta::detail
