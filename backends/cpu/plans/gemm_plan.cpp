// The rules of gemm_f32's plan, each with the reason in a line; the measurements behind them are
// in README.md beside this file, under the rule's name.
#include "backends/cpu/plans/gemm_plan.hpp"

#include "backends/cpu/kernels/micro_kernel.hpp"

namespace porta::detail {
namespace {

// Below this many multiply-adds a GEMM runs on the calling thread: waking threads costs more.
constexpr std::int64_t parallel_threshold = std::int64_t{1} << 20;
// Up to this many columns of C, packing an f32 A costs more than reading it in place.
constexpr std::int64_t in_place_a_max_cols = 512;
// Up to this many rows of C per thread, A is read in place whatever C's columns, and B with it.
constexpr std::int64_t in_place_max_rows = 128;
// Up to this many columns of C (A's rows and B f32), dot products along k beat the micro-kernels.
constexpr std::int64_t dot_max_cols = 8;
// Up to this many rows beside a transposed f32 B, dot products of rows as they lie (few_rows);
// not per thread, or the sums' order would depend on the thread count.
constexpr std::int64_t dot_max_rows = 16;
// Up to this many rows beside a transposed f32 B of more than half of L2: C^T = B op(A)^T.
constexpr std::int64_t transposed_max_rows = 128;
// Rows of C per thread from which each thread may pack the whole of op(B) for itself.
constexpr std::int64_t own_b_min_rows = 8;
// Rows of C per thread up to which threads that read A in place share C's columns, not its rows.
constexpr std::int64_t split_columns_max_rows = 256;
// Up to this many columns of C (or split_columns_max_rows rows a thread), a plain f32 B is read
// in place where A is, rather than packed.
constexpr std::int64_t b_in_place_max_cols = 256;
// Under this L1, C of at most 16 columns takes a kernel of fewer rows (narrow_on_small_l1).
constexpr std::int64_t small_l1 = 48 << 10;
// A transposed A beyond half of L2 is read in place, by columns, only by a kernel set whose wide tile
// of rows takes at least this many bytes of each cache line it loads per step of k, where C has at
// least packing_min_rows rows and columns (columns_fill_lines).
constexpr std::int64_t columns_min_bytes = 48, packing_min_rows = 64;

constexpr std::int64_t f32_bytes = sizeof(float);

// Depth slices max_depth_slice deep (deeper halves the passes over C; README.md, `kc`); a task's
// kc x mc A block fills a quarter of L2, a kc x nc B slice a quarter of L3.
void block(GemmPlan& plan, const GemmShape& s, const CacheSizes& cache) {
  const MicroKernel& kernel = *plan.kernel;
  const std::int64_t kc = max_depth_slice;
  plan.mc_max = std::clamp(cache.l2 / 4 / (kc * f32_bytes) / kernel.mr * kernel.mr, kernel.mr, 64 * kernel.mr);
  const std::int64_t nc = std::clamp(cache.l3 / 4 / (kc * f32_bytes) / kernel.nr * kernel.nr, kernel.nr,
                                     128 * kernel.nr);
  plan.nc = std::min(nc, ceil_div(s.n, kernel.nr) * kernel.nr);
  plan.kc = std::min(kc, s.k);
}

// The kernel and how A arrives (README.md, `in_place_a_max_cols`, `a_from_memory`,
// `columns_fill_lines`, `narrow_on_small_l1`, `streamed`).
void choose_a(GemmPlan& plan, const GemmShape& s, const Machine& machine) {
  const KernelSet& set = kernel_set(machine.isa);
  // A transposed A read by columns from memory, not L3, has each step of k in another page; and
  // from beyond L2, a tile of few rows uses a small part of each line it loads, but packing A (and
  // then B) pays only where each packed element serves enough tiles.
  const std::int64_t a_bytes = s.m * s.k * f32_bytes;
  const bool a_from_memory = a_bytes > machine.cache.l3 / 2;
  const bool columns_fill_lines = set.wide.mr * f32_bytes >= columns_min_bytes || a_bytes <= machine.cache.l2 / 2 ||
                                  std::min(s.m, s.n) < packing_min_rows;
  const bool a_in_place = s.a_dtype == DType::f32 && (!s.a_trans || (!a_from_memory && columns_fill_lines)) &&
                          (s.n <= in_place_a_max_cols || s.m <= in_place_max_rows * plan.threads);
  const bool a_by_rows = a_in_place && !s.a_trans;
  // Rows read in place that crowd an L1 set, and narrow C on a small L1, take a kernel of fewer rows.
  const MicroKernel& plain = set.for_columns(s.n);
  const bool narrow_on_small_l1 = plain.nr < set.wide.nr && machine.cache.l1 < small_l1;
  const bool fewer_rows = a_by_rows && (narrow_on_small_l1 || rows_alias_in_l1(plain.mr, s.lda));
  // An A read by rows from memory is streamed: the kernel prefetches its next tile's rows.
  const bool streamed = a_by_rows && a_from_memory;
  plan.kernel = &set.for_gemm(s.n, a_in_place, fewer_rows, streamed);
  plan.a_read = !a_in_place ? GemmARead::packed
                : !a_by_rows ? GemmARead::columns
                : streamed   ? GemmARead::rows_streamed
                             : GemmARead::rows;
}

// How B arrives and how the threads share the work (README.md, `b_in_place_max_cols`,
// `whole_depth`, `own_b_min_rows`, `split_columns_max_rows`).
void choose_b(GemmPlan& plan, const GemmShape& s, const Machine& machine) {
  // Packed ahead, B costs the call nothing to pack and has no copies to share; threads that read A
  // in place with few rows each still share C's columns.
  if (s.b_packed) {
    plan.b_read = GemmBRead::packed_ahead;
    plan.pass = s.k;
    plan.split_columns = plan.parallel && plan.a_in_place() && s.m <= split_columns_max_rows * machine.threads;
    return;
  }
  const bool b_in_place = plan.a_in_place() && s.b_dtype == DType::f32 && !s.b_trans &&
                          (s.n <= b_in_place_max_cols || s.m <= split_columns_max_rows * plan.threads);
  // A column slice of op(B) that fits a quarter of L3 is packed whole: two parallel regions, not
  // two per depth slice.
  const bool whole_depth = b_in_place || s.k * plan.nc * f32_bytes <= machine.cache.l3 / 4;
  plan.pass = whole_depth ? s.k : plan.kc;
  // Each thread packs its own B where the copies fit half of L3: a B shared between cores crosses
  // their caches on every call.
  const bool own_b = !b_in_place && plan.parallel && s.m >= own_b_min_rows * machine.threads &&
                     machine.threads * plan.pass * plan.nc * f32_bytes <= machine.cache.l3 / 2;
  plan.b_read = b_in_place ? GemmBRead::in_place : own_b ? GemmBRead::own_panels : GemmBRead::shared_panels;
  // Few rows a thread, A in place: the threads share C's columns, each packing or reading only its own.
  plan.split_columns = plan.parallel && plan.a_in_place() && (own_b || b_in_place) &&
                       s.m <= split_columns_max_rows * machine.threads;
}

// The algorithms that need no micro-kernel, where they apply (README.md, `dot_max_rows`,
// `transposed_max_rows`, `dot_max_cols`); else blocked. A B packed ahead is read as packed: the
// transposed product serves to avoid packing it (README.md, `packed_ahead`).
GemmAlgorithm algorithm_of(const GemmShape& s, const CacheSizes& cache) {
  if (s.k <= 0) return GemmAlgorithm::zero_fill;
  // (A's one row is contiguous unless transposed with a row stride, which matmul never passes.)
  const bool a_rows = s.a_dtype == DType::f32 && (!s.a_trans || (s.m == 1 && s.lda == 1));
  const bool b_f32 = s.b_dtype == DType::f32;
  if (a_rows && b_f32 && (s.m == 1 || (s.b_trans && s.m <= dot_max_rows))) return GemmAlgorithm::few_rows;
  if (s.b_trans && b_f32 && !s.b_packed && s.m <= transposed_max_rows && s.n > s.m && s.n * s.k * f32_bytes > cache.l2 / 2)
    return GemmAlgorithm::transposed_product;
  if (s.a_dtype == DType::f32 && !s.a_trans && b_f32 && s.n <= dot_max_cols) return GemmAlgorithm::dot;
  return GemmAlgorithm::blocked;
}

// The tasks of the algorithms without a micro-kernel.
void cut(GemmPlan& plan, const GemmShape& s, const Machine& machine) {
  const std::int64_t threads = machine.threads;
  if (plan.algorithm == GemmAlgorithm::few_rows) {
    // A few chunks of 16 columns a thread; beside several rows, chunks that stay in L2.
    plan.chunk = plan.parallel ? ceil_div(ceil_div(s.n, 4 * threads), 16) * 16 : s.n;
    const std::int64_t l2_cols = machine.cache.l2 / 4 / (s.k * f32_bytes) / 16 * 16;
    if (s.m > 1) plan.chunk = std::min(plan.chunk, std::max(std::int64_t{16}, l2_cols));
  } else if (plan.algorithm == GemmAlgorithm::dot) {
    plan.chunk = plan.parallel ? ceil_div(ceil_div(s.m, 4 * threads), 4) * 4 : s.m;  // whole 4-row groups
  } else if (plan.algorithm == GemmAlgorithm::transposed_product) {
    plan.chunk = ceil_div(s.n, ceil_div(s.n, 4096));  // a copy of C^T of at most 2 MiB per 128 rows
    plan.task_rows = plan.parallel ? ceil_div(s.m, threads) : s.m;
  }
}

const char* name(GemmAlgorithm a) {
  switch (a) {
    case GemmAlgorithm::zero_fill: return "zero_fill";
    case GemmAlgorithm::few_rows: return "few_rows";
    case GemmAlgorithm::transposed_product: return "transposed_product";
    case GemmAlgorithm::dot: return "dot";
    case GemmAlgorithm::blocked: return "blocked";
  }
  return "?";
}

const char* name(GemmARead a) {
  switch (a) {
    case GemmARead::packed: return "packed";
    case GemmARead::rows: return "rows";
    case GemmARead::rows_streamed: return "rows_streamed";
    case GemmARead::columns: return "columns";
  }
  return "?";
}

const char* name(GemmBRead b) {
  switch (b) {
    case GemmBRead::shared_panels: return "shared_panels";
    case GemmBRead::own_panels: return "own_panels";
    case GemmBRead::in_place: return "in_place";
    case GemmBRead::packed_ahead: return "packed_ahead";
  }
  return "?";
}

}  // namespace

GemmPlan plan_gemm(const GemmShape& shape, const Machine& machine) {
  GemmPlan plan;
  plan.parallel = machine.threads > 1 && shape.m * shape.n * shape.k >= parallel_threshold;
  plan.threads = plan.parallel ? machine.threads : 1;
  plan.algorithm = algorithm_of(shape, machine.cache);
  if (plan.algorithm != GemmAlgorithm::blocked) {
    cut(plan, shape, machine);
    return plan;
  }
  choose_a(plan, shape, machine);
  block(plan, shape, machine.cache);
  choose_b(plan, shape, machine);
  return plan;
}

TaskGrid gemm_task_grid(const GemmPlan& plan, std::int64_t m, std::int64_t slice_panels) {
  const std::int64_t mr = plan.kernel->mr, threads = plan.threads;
  const std::int64_t row_panels = ceil_div(m, mr);
  // A few tasks per thread even up to mc_max rows, so that a busy core does not hold up the rest,
  // and a multiple of the threads (README.md, `task_grid`).
  const std::int64_t wanted = threads > 1 ? 4 * threads : 1;
  const std::int64_t least_blocks = ceil_div(m, plan.mc_max);
  // Split by columns, no more row blocks than mc_max asks for.
  if (plan.split_columns && slice_panels >= 2 * threads) {
    const std::int64_t chunk_panels = ceil_div(slice_panels, threads);
    return {mr, m, row_panels, least_blocks, chunk_panels, ceil_div(slice_panels, chunk_panels), true};
  }
  const std::int64_t blocks = ceil_div(std::max(least_blocks, wanted), threads) * threads;
  const std::int64_t row_blocks = std::min(row_panels, blocks);
  const std::int64_t col_chunks = std::clamp(ceil_div(wanted, row_blocks), std::int64_t{1}, slice_panels);
  const std::int64_t chunk_panels = ceil_div(slice_panels, col_chunks);
  return {mr, m, row_panels, row_blocks, chunk_panels, ceil_div(slice_panels, chunk_panels), false};
}

std::string describe(const GemmShape& s) {
  return "gemm " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " " +
         std::string(to_string(s.a_dtype)) + " " + std::string(to_string(s.b_dtype)) + " " + (s.a_trans ? "T" : "N") +
         (s.b_trans ? "T" : "N");
}

std::string describe(const GemmPlan& plan) {
  std::string line = std::string("gemm ") + name(plan.algorithm);
  if (plan.algorithm == GemmAlgorithm::blocked) {
    line += " kernel=" + kernel_name(*plan.kernel) + " a=" + name(plan.a_read) + " b=" + name(plan.b_read) +
            " kc=" + std::to_string(plan.kc) + " nc=" + std::to_string(plan.nc) +
            " pass=" + std::to_string(plan.pass);
    if (plan.split_columns) line += " split=columns";
  } else if (plan.chunk > 0) {
    line += " chunk=" + std::to_string(plan.chunk);
  }
  return line + " threads=" + std::to_string(plan.threads);
}

}  // namespace porta::detail
