#pragma once
// GEMM micro-kernels: register-resident mr x nr tiles of C from A and B, packed or in place.
// Each instruction set has its own file compiled with a target attribute, so one binary carries
// them all and CPUID picks one at run time.
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>
#include <vector>

#include "core/runtime/op_math.hpp"
#include "porta/graph.hpp"

namespace porta::detail {

// What a kernel applies to its finished tile in registers before the one store:
//   c = act(sum + bias[j] (+ residual[i * ld_residual + j])), rounded as the epilogue pass does.
// Only the activations that are a clamp (None, Relu, Relu6); `fusable` says which.
struct TileEpilogue {
  const float* bias = nullptr;      // nr values, or null
  const float* residual = nullptr;  // laid out like C, or null
  std::int64_t ld_residual = 0;
  Activation activation = Activation::None;

  static constexpr bool fusable(Activation a) {
    return a == Activation::None || a == Activation::Relu || a == Activation::Relu6;
  }
};

// What a call does to its finished tile, as constants: the kernels' stores are compiled once per
// combination, so that no stored vector tests the call's choices (in a 16-deep 7x48 call, the
// stores with those tests took a quarter of the kernel's time). With an epilogue, the bias (zero
// where absent) is always added.
struct TileFinish {
  bool accumulate = false;  // add C's old values
  bool epilogue = false;    // add the bias, then the residual where `residual`, then the clamp
  bool residual = false;
  Activation activation = Activation::None;
};

// The combinations, indexed by finish_index.
inline constexpr TileFinish tile_finishes[] = {
    {false, false, false, Activation::None},  {true, false, false, Activation::None},
    {false, true, false, Activation::None},   {false, true, false, Activation::Relu},
    {false, true, false, Activation::Relu6},  {false, true, true, Activation::None},
    {false, true, true, Activation::Relu},    {false, true, true, Activation::Relu6},
    {true, true, false, Activation::None},    {true, true, false, Activation::Relu},
    {true, true, false, Activation::Relu6},   {true, true, true, Activation::None},
    {true, true, true, Activation::Relu},     {true, true, true, Activation::Relu6}};

constexpr int finish_index(bool accumulate, const TileEpilogue* e) {
  if (!e) return accumulate ? 1 : 0;
  const int clamp = e->activation == Activation::Relu ? 1 : e->activation == Activation::Relu6 ? 2 : 0;
  return 2 + (accumulate ? 6 : 0) + (e->residual ? 3 : 0) + clamp;
}

// Calls Store::template run<tile_finishes[index]>(args...). A kernel that calls it is
// [[gnu::flatten]], so that this and the chosen store inline into it, in its instruction set.
template <class Store, int I = 0, class... Args>
void with_tile_finish(int index, Args&&... args) {
  if constexpr (I < std::ssize(tile_finishes)) {
    if (index == I) return Store::template run<tile_finishes[I]>(args...);
    with_tile_finish<Store, I + 1>(index, args...);
  }
}

// One register of a tile through the epilogue: sum + bias (+ residual), then the activation lane
// by lane as op_math.hpp writes it (Relu keeps v > 0, else 0, a NaN too; Relu6 replaces v < 0 and
// v > 6, a NaN stays). V is the kernel's vector type (__m512, __m256), a GCC vector, taken by
// reference so that no vector crosses a call in another instruction set's ABI.
template <TileFinish F, class V>
[[gnu::always_inline]] inline void finish_lanes(V& sum, const V& bias, const V& residual) {
  sum += bias;
  if constexpr (F.residual) sum += residual;
  const V zero{}, six = zero + 6.0f;
  if constexpr (F.activation == Activation::Relu) sum = sum > zero ? sum : zero;
  if constexpr (F.activation == Activation::Relu6) {
    sum = sum < zero ? zero : sum;
    sum = sum > six ? six : sum;
  }
}

// Taps of an A read in place: tap t's rows start shift[t] floats after `a`, and its B panel
// t * b_stride floats after `b`. A convolution's filter taps, each a shift of the same input
// rows, thus sum in registers rather than through C; a plain product has one tap. A B panel's
// steps of k are b_ld floats apart: nr where it is packed (b_ld 0), else the row stride of a plain
// B read in place (any alignment) or of a wider packed panel whose first columns a tail kernel
// reads.
struct Taps {
  const std::int64_t* shift;
  int count;
  std::int64_t b_stride;
  std::int64_t b_ld = 0;

  // Floats between a B panel's steps of k, for a kernel nr columns wide.
  constexpr std::int64_t b_step(std::int64_t nr) const { return b_ld > 0 ? b_ld : nr; }
  // Whether B's loads must stop at `cols`: a B read in place may end within the panel, where a
  // packed panel is zero-padded to nr (masking a wider packed panel's loads is merely harmless).
  constexpr bool b_ends_within(int cols, std::int64_t nr) const { return b_ld > 0 && cols < nr; }
};
inline constexpr std::int64_t no_shift[1] = {0};
inline constexpr Taps one_tap{no_shift, 1, 0};

// One or more mr x nr tiles of C (+)= A's rows times B over `taps`: c[i * ldc + j] (+)= sum over
// t, p < depth of A(i, p) * b[t * b_stride + p * b_ld + j] (b_ld nr where 0), A(i, p) read as
// ARead (below) says, at a[shift[t] + ...]. Rows of a row-major f32 A in place serve GEMMs with
// few columns or few rows, where packing A would cost as much as multiplying it, and
// convolutions, whose input rows are A; A's columns serve packed panels and a transposed A in
// place. Only columns j < cols (at most nr) of C, the bias and the residual are read or written,
// and of a B read in place (b_ld > 0): a convolution's last filter panel lands in y itself though
// y has fewer channels left than a panel, and a GEMM's B may end within its last panel.
// `epilogue` (may be null) finishes the tile on its way out.
// With `tiles` > 1 it runs that many tiles of consecutive rows in one call, each mr rows of A (by
// rows mr * lda floats, by columns mr), C and the residual on from the one before (at depth 16,
// set-up and stores took nearly half of a call's time; a call per tile pays the set-up each time).
// The caller fills in one MicroKernelArgs per call and passes it whole.
struct MicroKernelArgs {
  std::int64_t depth = 0;
  const float* a = nullptr;
  std::int64_t lda = 0;
  Taps taps = one_tap;
  const float* b = nullptr;
  float* c = nullptr;
  std::int64_t ldc = 0;
  std::int64_t tiles = 1;
  int cols = 0;
  bool accumulate = false;
  const TileEpilogue* epilogue = nullptr;  // may be null
};
using MicroKernelFn = void (*)(const MicroKernelArgs& call);

// How a kernel reads A. By columns: A(i, p) at a[p * lda + i], a packed panel's layout (lda =
// mr) and a transposed A's where it lies (gemm_f32). By rows: A(i, p) at a[i * lda + p], a
// row-major A in place; or so and streamed from memory, where the hardware prefetchers fall
// behind: a GEMM reads 2 KB of each row (a depth slice), a 1x1 convolution a pixel's channels,
// before the next tile's rows. Streamed, every 16 steps of k, as each row's current cache line is
// used up, the kernel prefetches a line for each row: the next tile's (the row mr rows on, at the
// same depth), or in the kernels for rows that alias in L1 (rows_alias_in_l1), where that line
// would fall into the same full set, the one `along_rows_ahead` bytes on in the same row.
// Prefetches past A's end are harmless: a prefetch never faults.
enum class ARead { columns, rows, streamed_next_tile, streamed_along_rows };
inline constexpr std::int64_t along_rows_ahead = 512;

// A packed panel times B read in place at a shift per step of k: element (p, j) at
// b[shift[p] + j], for j < cols only (lanes past cols are neither read nor stored), and only
// rows < rows of C stored.
// A convolution's input is B this way, each filter tap a shift (backends/cpu/ops/conv2d.cpp).
using MicroKernelShiftedBFn = void (*)(std::int64_t depth, const float* a, const float* b, const std::int64_t* shift,
                                       float* c, std::int64_t ldc, int rows, int cols, bool accumulate);

// No kernel has more rows (the AVX-512 narrow one has 28).
inline constexpr std::int64_t max_mr = 28;

struct MicroKernel {
  std::string_view isa;  // "avx512", "avx2", "generic"
  std::int64_t mr, nr;
  MicroKernelFn run_columns_a;   // A by columns (ARead): packed panels, a transposed A in place
  MicroKernelFn run_rows_a;      // A by rows, in place
  MicroKernelFn run_streamed_a;  // the same, streaming A from memory
  MicroKernelShiftedBFn run_shifted_b = nullptr;  // the wide kernels only
  // The same rows, tail_nr columns, A in place by rows or columns: for a convolution's last
  // filter panel where at most tail_nr filters are left, packed tail_nr wide (112 filters: three
  // panels of 32 and one of 16, not four of 32), and a GEMM's last panel of at most tail_nr
  // columns. Zero where none.
  std::int64_t tail_nr = 0;
  MicroKernelFn run_tail_rows_a = nullptr;
  MicroKernelFn run_tail_columns_a = nullptr;
};

// `kernel` with a tail tail_nr columns wide, whose functions read A by rows and by columns.
inline MicroKernel with_tail(MicroKernel kernel, std::int64_t tail_nr, MicroKernelFn rows_a, MicroKernelFn columns_a) {
  kernel.tail_nr = tail_nr;
  kernel.run_tail_rows_a = rows_a;
  kernel.run_tail_columns_a = columns_a;
  return kernel;
}

// The micro-kernels of one instruction set, and the choices among them that the plans make
// (backends/cpu/plans/). The free functions below make the same choices in the host's set.
struct KernelSet {
  MicroKernel wide, narrow, wide_aliasing, narrow_aliasing;
  std::vector<MicroKernel> for_filters;  // further candidates for convolutions
  std::optional<MicroKernel> pointwise;  // for 1x1 layers of exactly its nr filters
  std::vector<MicroKernel> four_row;     // for a GEMM's last row panel, beside the aliasing kernels

  const MicroKernel& for_columns(std::int64_t columns, bool fewer_rows = false) const;
  const MicroKernel& for_gemm(std::int64_t columns, bool a_in_place, bool fewer_rows, bool a_streamed = false) const;
  const MicroKernel& for_last_panel(const MicroKernel& kernel, std::int64_t rows) const;
  const MicroKernel& for_filters_of(std::int64_t filters, std::int64_t rows, bool pointwise, bool streams) const;
  // The pointwise kernel (AVX-512's 6x64) where `columns` are whole panels of it, else null.
  const MicroKernel* pointwise_panels(std::int64_t columns) const;
};

// Whether this build has the kernels of `isa` (generic always), whether or not this CPU runs them.
bool isa_built(std::string_view isa);
// The kernels of `isa`, made once: those of a set this build has (isa_built), else the generic
// set. Choices made in a set this CPU does not run are only data (the plans' tests).
const KernelSet& kernel_set(std::string_view isa);
// The set of the host: the widest this build has and this CPU runs, at most PORTA_CPU_ISA's.
const KernelSet& host_kernel_set();

MicroKernel avx512_micro_kernel();
MicroKernel avx512_narrow_micro_kernel();
MicroKernel avx512_seven_row_micro_kernel();
MicroKernel avx512_pointwise_micro_kernel();
MicroKernel avx512_aliasing_micro_kernel(bool narrow);
MicroKernel avx512_four_row_micro_kernel(bool narrow);
MicroKernel avx2_micro_kernel();
MicroKernel avx2_three_vector_micro_kernel();
MicroKernel generic_micro_kernel();

// The instruction sets of the kernels, widest first.
inline constexpr std::string_view cpu_isas[] = {"avx512", "avx2", "generic"};
// Whether this build has the kernels of `isa` ("avx512", "avx2": the sets PORTA_CPU_KERNELS
// names; "generic" always) and this CPU runs them.
bool isa_runs(std::string_view isa);
// Every micro-kernel this build has and this CPU runs: for tests.
std::vector<MicroKernel> runnable_micro_kernels();

// The widest kernel this build has and this CPU runs (isa_runs), chosen once.
// PORTA_CPU_ISA=avx2|generic caps the choice, so tests can exercise the narrower kernels on a wider
// CPU; any other value but avx512 throws InvalidArgument (the cpu device checks it when it opens).
const MicroKernel& gemm_micro_kernel();
// The kernel for C with `columns` columns: a narrow one (fewer columns, more rows) where C has at
// most its nr columns and the instruction set has one, else the wide one. With `fewer_rows`, for
// A's rows read in place where many at once run slowly (at a stride that aliases in L1,
// rows_alias_in_l1, and gemm_f32's narrow GEMMs on a small L1), one that reads no more rows at
// once than an L1 set has ways.
const MicroKernel& gemm_micro_kernel_for(std::int64_t columns, bool fewer_rows = false);
// A GEMM's kernel: gemm_micro_kernel_for's, but for 33 to 48 columns, which the wide kernel
// computes as two panels of 32, with A read in place (`a_in_place`) a kernel 48 wide where the
// instruction set has one (AVX-512's 7x48: its 7 rows need no aliasing variant, though streamed
// at a stride that aliases, its next tile's prefetches fill the set; 4096x48x4096, rows 16 KiB
// apart, still ran 1.35x as fast), else the narrow kernel (AVX-512's 16 columns, 48 in three
// panels; for rows that alias, its 8-row one). Zen 5, 1 thread, GFLOP/s: 2048x48x2048 161 -> 210,
// 1760x33x1760 112 -> 143; A packed (a transposed A was, before it was read in place by columns):
// 2000x48x2000 115 -> 145.
// With `a_streamed` (A's rows read in place from memory), for columns in whole panels of a
// pointwise kernel, that one (AVX-512's 6x64): each pass over A's rows, the first from memory and
// the rest from L2, then serves 64 columns, not 32 (Zen 4, native ÷ oneDNN, 1 thread and 2, 2
// turns: 4096x64x4096 0.94 -> 1.01 and 0.94 -> 1.02, 4096x128x4096 0.92-0.96 -> 1.01-1.03 and
// 0.94-0.98 -> 1.01, 2560x64x2560 0.98-0.99 -> 1.03, 4096x256x4096 0.92-0.93 -> 0.95-0.97 and
// 0.96-0.97 -> 1.00, 3000x512x3000 0.98 -> 1.03-1.04 and 0.95-0.97 -> 0.99-1.02; 6000x64x3000
// and 7680x128x2560 level. From L3, 1760x128x1760 and 2048x128x2048, level, so not there).
const MicroKernel& gemm_kernel_for(std::int64_t columns, bool a_in_place, bool fewer_rows, bool a_streamed = false);
// The kernel for a GEMM's last panel of `rows` rows (fewer than kernel.mr), packed or copied as
// rows: of the kernels as wide as `kernel`, the one with the fewest rows that holds them
// (AVX-512: 8 or 4), else `kernel` itself.
const MicroKernel& gemm_last_panel_kernel(const MicroKernel& kernel, std::int64_t rows);
// The columns a convolution's panel of its last `left` filters (at most nr) is packed and
// computed with: the tail kernel's where they fit it, else nr.
inline std::int64_t panel_columns(const MicroKernel& kernel, std::int64_t left) {
  return left <= kernel.tail_nr ? kernel.tail_nr : kernel.nr;
}

// The rows times columns that `kernel` computes for a convolution's `filters` (per group) over
// `rows` rows of A: whole tiles of mr rows, whole panels of nr filters and a last one of
// panel_columns.
inline std::int64_t computed_by(const MicroKernel& kernel, std::int64_t filters, std::int64_t rows) {
  const std::int64_t whole = filters / kernel.nr * kernel.nr, left = filters - whole;
  return round_up(rows, kernel.mr) * (whole + (left > 0 ? panel_columns(kernel, left) : 0));
}

// The kernel for a convolution's `filters` (per group) over `rows` rows of A read in place: for a
// `pointwise` (1x1) layer of exactly as many filters as a pointwise kernel has columns, or of a
// multiple of them where its input `streams` from memory, that one (AVX-512's 6x64); else, of
// the kernels the instruction set has, the one that computes least (computed_by; on AVX-512,
// tiles of 7 rows for a 7x7 image's 49). Ties go to one without a tail panel, then to the wider
// panels. Streamed, panels of 64 pass over each row half as often as panels of 32, as in the GEMM
// (gemm_kernel_for; Zen 4, against oneDNN, 2 suites, 1 thread and 2: 8x64x56x56->256 0.93 ->
// 1.07 and 0.92 -> 1.08, 8x512x28x28->128 1.00 -> 1.04 and 1.02 -> 1.03). Layers from cache lost
// (8x512x7x7->2048 1.21 -> 1.10, 8x2048x7x7->512 1.35 -> 1.26 on 1 thread), and so did strided
// ones (8x256x56x56->128 /2 0.98 -> 0.92).
const MicroKernel& filter_micro_kernel_for(std::int64_t filters, std::int64_t rows, bool pointwise,
                                           bool streams = false);

}  // namespace porta::detail
