#pragma once
// How gemm_f32 computes a product of a given shape on a given machine, decided before any work:
// the algorithm, the micro-kernel, the blocking, how A and B arrive and how the threads share it.
// gemm_f32 makes the plan and runs it; tests check the plans of made-up machines.
#include <algorithm>
#include <cstdint>
#include <string>

#include "backends/cpu/plans/machine.hpp"
#include "core/runtime/op_math.hpp"
#include "porta/dtype.hpp"

namespace porta::detail {

struct MicroKernel;

// C[m, n] = op(A)[m, k] op(B)[k, n]: each operand's storage dtype, leading dimension and
// transposition (GemmOperand without its data).
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  DType a_dtype = DType::f32, b_dtype = DType::f32;
  std::int64_t lda = 0, ldb = 0;
  bool a_trans = false, b_trans = false;
  bool b_packed = false;  // op(B) packed ahead into the panels of this shape's plan (pack_b_ahead)
};

enum class GemmAlgorithm {
  zero_fill,           // k = 0: C is zeros
  few_rows,            // dot products of A's rows with B streamed as stored
  transposed_product,  // C^T = B op(A)^T, B's rows read in place as A's
  dot,                 // few columns: dot products along k
  blocked,             // Goto/BLIS: packed or in-place panels through the micro-kernel
};

// How the blocked algorithm reads A: packed into panels, or where it lies by rows (streamed from
// memory) or by columns (transposed).
enum class GemmARead { packed, rows, rows_streamed, columns };
// How it reads B: packed once and shared, packed by each thread for itself, where it lies, or
// packed ahead of the call (a constant B, once when the graph is prepared).
enum class GemmBRead { shared_panels, own_panels, in_place, packed_ahead };

struct GemmPlan {
  GemmAlgorithm algorithm = GemmAlgorithm::blocked;
  bool parallel = false;
  std::int64_t threads = 1;  // that share the tasks: the machine's where parallel, else 1
  // few_rows: C's columns per task; dot: C's rows per task; transposed_product: C's columns per
  // pass (and task_rows: C's rows per transposing task).
  std::int64_t chunk = 0, task_rows = 0;
  // The blocked algorithm's:
  const MicroKernel* kernel = nullptr;
  GemmARead a_read = GemmARead::packed;
  GemmBRead b_read = GemmBRead::shared_panels;
  std::int64_t kc = 0;      // depth of a packed slice (at most k)
  std::int64_t mc_max = 0;  // rows of a task at most
  std::int64_t nc = 0;      // columns of a B slice (at most n, in whole panels)
  std::int64_t pass = 0;    // depth of B packed at once: k, or kc
  bool split_columns = false;  // threads share C's columns rather than its rows

  bool a_in_place() const { return a_read != GemmARead::packed; }
  bool a_by_rows() const { return a_read == GemmARead::rows || a_read == GemmARead::rows_streamed; }
  std::int64_t b_copies() const {
    return b_read == GemmBRead::own_panels ? threads : b_read == GemmBRead::shared_panels ? 1 : 0;
  }
};

// The plan of a product of `shape` (m, n > 0) on `machine`. Pure: the same facts, the same plan.
GemmPlan plan_gemm(const GemmShape& shape, const Machine& machine);

// How the blocked algorithm cuts C's rows and a B slice's panels into tasks: row blocks of whole
// mr panels (at most mc_max rows), as even as whole panels allow, and when rows alone give too
// few tasks for the threads, column chunks of whole nr panels. Split by columns, a chunk for each
// thread of at least two panels, whose row blocks run one after another (chunk-major), so that a
// thread's range of tasks keeps to one chunk.
struct TaskGrid {
  std::int64_t mr, m, row_panels, row_blocks;
  std::int64_t chunk_panels, col_chunks;
  bool chunk_major;

  std::int64_t tasks() const { return row_blocks * col_chunks; }
  std::int64_t block(std::int64_t task) const { return chunk_major ? task % row_blocks : task / col_chunks; }
  std::int64_t chunk(std::int64_t task) const { return chunk_major ? task / row_blocks : task % col_chunks; }
  std::int64_t row0(std::int64_t block) const { return block * row_panels / row_blocks * mr; }
  std::int64_t rows(std::int64_t block) const { return std::min(row0(block + 1), m) - row0(block); }
  std::int64_t max_rows() const { return ceil_div(row_panels, row_blocks) * mr; }
};

// The grid of a slice of `slice_panels` panels of B under a blocked `plan` of C's `m` rows.
TaskGrid gemm_task_grid(const GemmPlan& plan, std::int64_t m, std::int64_t slice_panels);

// The problem in a few words: "gemm 1760x16x1760 f32 f32 NT" (m x n x k, A's and B's dtypes and
// whether each is transposed).
std::string describe(const GemmShape& shape);

// One line: "gemm blocked kernel=avx512 14x32 a=rows b=in_place kc=512 nc=256 pass=512 threads=2 split=columns".
std::string describe(const GemmPlan& plan);

}  // namespace porta::detail
