// Softmax along one axis, max-subtracted so exp cannot overflow. Each line along the axis is
// reduced in index order by one task, so results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <variant>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>

#include "backends/cpu/ops/ops.hpp"
#include "backends/cpu/ops/tensor_io.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {
namespace {

// Floats in one task's buffer when lines are strided (inner > 1).
constexpr std::int64_t block_budget = 1 << 16;

// inner == 1: every line along the axis is a contiguous row.
void softmax_rows(const HostTensor& x, const HostTensor& y, const AxisSplit& split) {
  const std::int64_t length = split.axis;
  const auto rows = tbb::blocked_range<std::int64_t>(0, split.outer);
  tbb::parallel_for(rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    std::vector<float> x_buffer(length), y_buffer(length);
    for (std::int64_t row = range.begin(); row != range.end(); ++row) {
      const float* xv = read_f32(x, row * length, length, x_buffer.data());
      float* yv = write_f32(y, row * length, y_buffer.data());
      float max = -std::numeric_limits<float>::infinity();
      for (std::int64_t a = 0; a < length; ++a) max = std::max(max, xv[a]);
      float sum = 0.0f;
      for (std::int64_t a = 0; a < length; ++a) {
        yv[a] = std::exp(xv[a] - max);
        sum += yv[a];
      }
      for (std::int64_t a = 0; a < length; ++a) yv[a] /= sum;
      store_f32(y, row * length, length, yv);
    }
  });
}

// Lines are strided by `inner`: a block of neighbouring lines is loaded as [axis, columns] so
// every loop runs along contiguous columns.
void softmax_columns(const HostTensor& x, const HostTensor& y, const AxisSplit& split) {
  const std::int64_t width = std::clamp(block_budget / std::max(split.axis, std::int64_t{1}),
                                        std::int64_t{1}, split.inner);
  const std::int64_t blocks = ceil_div(split.inner, width);
  const auto work = tbb::blocked_range2d<std::int64_t>(0, split.outer, 0, blocks);
  tbb::parallel_for(work, [&](const tbb::blocked_range2d<std::int64_t>& range) {
    std::vector<float> values(split.axis * width), max(width), sum(width);
    for (std::int64_t outer = range.rows().begin(); outer != range.rows().end(); ++outer) {
      for (std::int64_t block = range.cols().begin(); block != range.cols().end(); ++block) {
        const std::int64_t first = outer * split.axis * split.inner + block * width;
        const std::int64_t columns = std::min(width, split.inner - block * width);
        for (std::int64_t a = 0; a < split.axis; ++a) {
          load_f32(x, first + a * split.inner, columns, values.data() + a * columns);
        }
        std::fill_n(max.begin(), columns, -std::numeric_limits<float>::infinity());
        std::fill_n(sum.begin(), columns, 0.0f);
        for (std::int64_t a = 0; a < split.axis; ++a) {
          const float* line = values.data() + a * columns;
          for (std::int64_t j = 0; j < columns; ++j) max[j] = std::max(max[j], line[j]);
        }
        for (std::int64_t a = 0; a < split.axis; ++a) {
          float* line = values.data() + a * columns;
          for (std::int64_t j = 0; j < columns; ++j) {
            line[j] = std::exp(line[j] - max[j]);
            sum[j] += line[j];
          }
        }
        for (std::int64_t a = 0; a < split.axis; ++a) {
          float* line = values.data() + a * columns;
          for (std::int64_t j = 0; j < columns; ++j) line[j] /= sum[j];
          store_f32(y, first + a * split.inner, columns, line);
        }
      }
    }
  });
}

}  // namespace

void cpu_softmax(const HostOpArgs& args) {
  const std::int64_t axis = std::get<SoftmaxParams>(args.node.params).axis;
  const AxisSplit split = split_at_axis(args.inputs[0].shape(), axis);
  if (args.output.numel() == 0) return;
  if (split.inner == 1) {
    softmax_rows(args.inputs[0], args.output, split);
  } else {
    softmax_columns(args.inputs[0], args.output, split);
  }
}

}  // namespace porta::detail
