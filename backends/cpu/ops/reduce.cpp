// Reductions over any set of axes: output elements in parallel chunks, each folding its reduced
// elements in f32 (one contiguous run where the trailing axes are reduced, in partial results);
// where the leading axes are reduced, blocks of rows folded into blocks of columns.
#include <algorithm>
#include <limits>
#include <variant>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "backends/cpu/ops/lane_fold.hpp"
#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/ops/tensor_io.hpp"

namespace porta::detail {
namespace {

// Folds in runs along the innermost reduced axis, so that a run's start, not every element's
// offset, pays the divisions of reduced_offset (batchnorm's sums over N, H and W of NCHW).
template <class Fold>
float fold_one(const float* x, const ReduceSplit& s, float start, Fold fold) {
  if (s.reduced_extent.empty()) return fold(start, x[0]);
  const std::int64_t run = s.reduced_extent.back(), stride = s.reduced_stride.back();
  float acc = start;
  for (std::int64_t r = 0; r < s.reduced_count; r += run) {
    const float* v = x + s.reduced_offset(r);
    if (stride == 1) {
      acc = fold(acc, lane_fold(run, start, [v](std::int64_t i) { return v[i]; }, fold));
    } else {
      for (std::int64_t i = 0; i < run; ++i) acc = fold(acc, v[i * stride]);
    }
  }
  return acc;
}

template <class Fold>
void reduce(const HostOpArgs& args, const ReduceSplit& s, float start, float scale, Fold fold) {
  const F32Input x(args.inputs[0]);
  const HostTensor& y = args.output;
  // About 64K input elements a chunk: enough work to be worth a task, and a chunk of outputs fits
  // the buffer.
  const std::int64_t chunk = std::clamp<std::int64_t>(65536 / s.reduced_count, 1, chunk_elements);
  parallel_chunks(s.kept_count, chunk, [&](std::int64_t begin, std::int64_t count) {
    ChunkBuffer y_buffer;
    float* yv = write_f32(y, begin, y_buffer.data());
    for (std::int64_t i = 0; i < count; ++i)
      yv[i] = scale * fold_one(x.data() + s.kept_offset(begin + i), s, start, fold);
    store_f32(y, begin, count, yv);
  });
}

// The leading axes reduced, the trailing ones kept (a channels-last batch statistic: [N H W, C]):
// x as [rows, cols]. Tasks fold a block of rows into a block of columns, row after row, which
// vectorises along the columns where the general path would walk a column at a stride; each block
// of rows has partial results of its own, so that a few wide columns (C = 96) still make a task for
// every thread, and the blocks, fixed by the shape alone, keep the order of the sums, and the
// result, independent of the threads.
template <class Fold>
void reduce_rows(const HostOpArgs& args, std::int64_t rows, std::int64_t cols, float start, float scale, Fold fold) {
  const F32Input x(args.inputs[0]);
  const HostTensor& y = args.output;
  const std::int64_t block_cols = 256, block_rows = std::max<std::int64_t>(512, ceil_div(rows, 64));
  const std::int64_t row_blocks = ceil_div(rows, block_rows), col_blocks = ceil_div(cols, block_cols);
  std::vector<float> partial(static_cast<std::size_t>(row_blocks * cols));  // [row block][column]
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, row_blocks * col_blocks), [&](const auto& range) {
    for (std::int64_t task = range.begin(); task != range.end(); ++task) {
      const std::int64_t r0 = task / col_blocks * block_rows, c0 = task % col_blocks * block_cols;
      const std::int64_t r1 = std::min(rows, r0 + block_rows), width = std::min(block_cols, cols - c0);
      float* acc = partial.data() + r0 / block_rows * cols + c0;
      std::fill_n(acc, width, start);
      for (std::int64_t r = r0; r < r1; ++r) {
        const float* v = x.data() + r * cols + c0;
        for (std::int64_t j = 0; j < width; ++j) acc[j] = fold(acc[j], v[j]);
      }
    }
  });
  parallel_chunks(cols, block_cols, [&](std::int64_t begin, std::int64_t count) {
    ChunkBuffer y_buffer;
    float* yv = write_f32(y, begin, y_buffer.data());
    std::copy_n(partial.data() + begin, count, yv);
    for (std::int64_t b = 1; b < row_blocks; ++b)
      for (std::int64_t j = 0; j < count; ++j) yv[j] = fold(yv[j], partial[static_cast<std::size_t>(b * cols + begin + j)]);
    for (std::int64_t j = 0; j < count; ++j) yv[j] *= scale;
    store_f32(y, begin, count, yv);
  });
}

// How many leading axes `axes` (ascending) reduce, where they are exactly the leading ones and
// some axis is kept; else 0.
std::size_t leading_reduced(const Shape& shape, const std::vector<std::int64_t>& axes) {
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != static_cast<std::int64_t>(i)) return 0;
  return axes.size() < shape.size() ? axes.size() : 0;
}

// Calls run(start, scale, fold) with the reduction's first value, its scale over `count` reduced
// elements (a mean's 1 / count) and the function that folds one element in.
template <class Run>
void with_fold(Reduction op, std::int64_t count, Run run) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const auto sum = [](float a, float b) { return a + b; };
  switch (op) {
    case Reduction::Sum: return run(0.0f, 1.0f, sum);
    case Reduction::Mean: return run(0.0f, 1.0f / static_cast<float>(count), sum);
    case Reduction::Max: return run(-inf, 1.0f, [](float a, float b) { return std::max(a, b); });
    case Reduction::Min: return run(inf, 1.0f, [](float a, float b) { return std::min(a, b); });
  }
}

}  // namespace

void cpu_reduce(const HostOpArgs& args) {
  const auto& p = std::get<ReduceParams>(args.node.params);
  const Shape& shape = args.inputs[0].shape();
  if (const std::size_t lead = leading_reduced(shape, p.axes); lead > 0) {
    std::int64_t rows = 1, cols = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) (i < lead ? rows : cols) *= shape[i];
    if (rows > 1)
      return with_fold(p.op, rows, [&](float start, float scale, auto fold) {
        reduce_rows(args, rows, cols, start, scale, fold);
      });
  }
  const ReduceSplit s = reduce_split(shape, p.axes);
  with_fold(p.op, s.reduced_count,
            [&](float start, float scale, auto fold) { reduce(args, s, start, scale, fold); });
}

}  // namespace porta::detail
