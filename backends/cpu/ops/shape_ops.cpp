// Inputs and output share a dtype, so elements move as bytes: exact, NaN payloads included.
#include <algorithm>
#include <cstdint>
#include <cstring>
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

// Bytes per task of a parallel copy: big enough to amortise the task, small enough to share.
constexpr std::int64_t copy_chunk_bytes = 1 << 18;

// Output row `row` (every output index but the last two) gathers its elements from x through the
// strided view: a transpose's permuted strides, a slice's stepped ones, an expand's zeros. A row
// spans two dimensions so that a short last one (an interleave's, of 2 or 3) still makes long rows.
template <class Element>
void gather_rows(const HostTensor& x, const HostTensor& y, const StridedView& view) {
  if (y.numel() == 0) return;
  const std::size_t last = view.extent.size() - 1, outer = last == 0 ? 0 : last - 1;
  const std::int64_t length = view.extent[last], step = view.stride[last];
  const std::int64_t runs = last == 0 ? 1 : view.extent[outer], run_step = last == 0 ? 0 : view.stride[outer];
  const auto* src = reinterpret_cast<const Element*>(x.data);
  auto* dst = reinterpret_cast<Element*>(y.data);
  const auto rows = tbb::blocked_range<std::int64_t>(0, y.numel() / (runs * length));
  tbb::parallel_for(rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t row = range.begin(); row != range.end(); ++row) {
      std::int64_t rest = row, x_index = view.offset;
      for (std::size_t i = outer; i-- > 0;) {
        x_index += rest % view.extent[i] * view.stride[i];
        rest /= view.extent[i];
      }
      Element* y_row = dst + row * runs * length;
      for (std::int64_t r = 0; r < runs; ++r, x_index += run_step, y_row += length)
        if (step == 1)
          std::copy_n(src + x_index, length, y_row);  // a run of x: one block copy, not a loop of loads
        else
          for (std::int64_t j = 0; j < length; ++j) y_row[j] = src[x_index + j * step];
    }
  });
}

// Output row `row` of a pad, the last two output dimensions (so that a short last one, a stride
// spread by a reshape and a pad, still makes long rows): the input rows it reads (none where an
// outer coordinate lands in a constant pad), each padded along the last dimension.
template <class Element>
void pad_rows(const HostTensor& x, const HostTensor& y, const PadParams& p) {
  const Shape& x_shape = x.shape();
  const Shape& y_shape = y.shape();
  const Shape x_strides = contiguous_strides(x_shape);
  const std::size_t last = y_shape.size() - 1, outer = last == 0 ? 0 : last - 1;
  const std::int64_t length = y_shape[last], begin = p.pads[last], x_length = x_shape[last];
  const std::int64_t runs = last == 0 ? 1 : y_shape[outer];
  const auto value = static_cast<Element>(storage_bits(p.value, y.dtype()));
  const auto* src = reinterpret_cast<const Element*>(x.data);
  auto* dst = reinterpret_cast<Element*>(y.data);
  if (y.numel() == 0) return;
  const auto rows = tbb::blocked_range<std::int64_t>(0, y.numel() / (runs * length));
  tbb::parallel_for(rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t row = range.begin(); row != range.end(); ++row) {
      std::int64_t rest = row, x_row = 0;
      for (std::size_t i = outer; i-- > 0 && x_row >= 0;) {
        const std::int64_t from = pad_source(rest % y_shape[i] - p.pads[i], x_shape[i], p.mode);
        x_row = from < 0 ? -1 : x_row + from * x_strides[i];
        rest /= y_shape[i];
      }
      for (std::int64_t r = 0; r < runs; ++r) {
        Element* y_run = dst + (row * runs + r) * length;
        const std::int64_t from = last == 0 ? 0 : pad_source(r - p.pads[outer], x_shape[outer], p.mode);
        if (x_row < 0 || from < 0) {
          std::fill_n(y_run, length, value);
          continue;
        }
        const Element* x_run = src + x_row + (last == 0 ? 0 : from * x_strides[outer]);
        for (std::int64_t j = 0; j < length; ++j) {
          const std::int64_t at = pad_source(j - begin, x_length, p.mode);
          y_run[j] = at < 0 ? value : x_run[at];
        }
      }
    }
  });
}

// y[b][c][r] = x[b][r][c] for `batch` row-major rows x cols matrices, a task per square tile,
// whose rows and columns both stay in L1 (by output row, the inputs' rows would each be a
// stream).
template <class Element>
void transpose_matrices(const HostTensor& x, const HostTensor& y, std::int64_t batch, std::int64_t rows,
                        std::int64_t cols) {
  constexpr std::int64_t tile = 32;
  const auto* src = reinterpret_cast<const Element*>(x.data);
  auto* dst = reinterpret_cast<Element*>(y.data);
  const std::int64_t row_tiles = ceil_div(rows, tile), col_tiles = ceil_div(cols, tile);
  const auto tiles = tbb::blocked_range<std::int64_t>(0, batch * row_tiles * col_tiles);
  tbb::parallel_for(tiles, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t t = range.begin(); t != range.end(); ++t) {
      const std::int64_t b = t / (row_tiles * col_tiles), r0 = t / col_tiles % row_tiles * tile;
      const std::int64_t c0 = t % col_tiles * tile, r1 = std::min(r0 + tile, rows), c1 = std::min(c0 + tile, cols);
      const Element* x_b = src + b * rows * cols;
      Element* y_b = dst + b * rows * cols;
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c = c0; c < c1; ++c) y_b[c * rows + r] = x_b[r * cols + c];
    }
  });
}

// A transpose with its size-1 dimensions dropped and the runs of dimensions that stay adjacent
// and in order merged: NCHW -> NHWC is x [N, C, H * W] with perm [0, 2, 1].
struct MergedTranspose {
  Shape x;
  std::vector<std::int64_t> perm;
};

MergedTranspose merge_dims(const Shape& x_shape, const std::vector<std::int64_t>& perm) {
  // x's dimensions numbered without the size-1 ones, so that those do not split a run.
  std::vector<std::int64_t> kept(x_shape.size(), -1);
  std::int64_t count = 0;
  for (std::size_t d = 0; d < x_shape.size(); ++d)
    if (x_shape[d] != 1) kept[d] = count++;
  struct Run {
    std::int64_t first_dim, last_dim, size;  // in the kept numbering
  };
  std::vector<Run> runs;  // in y's order
  for (const std::int64_t axis : perm) {
    const std::int64_t d = kept[static_cast<std::size_t>(axis)];
    if (d < 0) continue;
    const std::int64_t size = x_shape[static_cast<std::size_t>(axis)];
    if (!runs.empty() && d == runs.back().last_dim + 1) {
      runs.back().last_dim = d;
      runs.back().size *= size;
    } else {
      runs.push_back({d, d, size});
    }
  }
  std::vector<std::int64_t> by_x(runs.size());  // runs in x's order
  for (std::size_t i = 0; i < runs.size(); ++i) by_x[i] = static_cast<std::int64_t>(i);
  std::sort(by_x.begin(), by_x.end(),
            [&](std::int64_t a, std::int64_t b) { return runs[a].first_dim < runs[b].first_dim; });
  MergedTranspose merged{Shape(runs.size()), std::vector<std::int64_t>(runs.size())};
  for (std::size_t j = 0; j < by_x.size(); ++j) {
    merged.x[j] = runs[by_x[j]].size;
    merged.perm[by_x[j]] = static_cast<std::int64_t>(j);
  }
  return merged;
}

template <class Element>
void transpose(const HostTensor& x, const HostTensor& y, const Node& node) {
  const auto& perm = std::get<TransposeParams>(node.params).perm;
  const MergedTranspose merged = merge_dims(x.shape(), perm);
  if (merged.perm.size() <= 1) {  // nothing moves
    std::memcpy(y.data, x.data, y.desc->bytes());
  } else if (merged.perm == std::vector<std::int64_t>{1, 0}) {
    transpose_matrices<Element>(x, y, 1, merged.x[0], merged.x[1]);
  } else if (merged.perm == std::vector<std::int64_t>{0, 2, 1}) {
    transpose_matrices<Element>(x, y, merged.x[0], merged.x[1], merged.x[2]);
  } else {
    gather_rows<Element>(x, y, strided_view(node, x.shape()));
  }
}

}  // namespace

void cpu_reshape(const HostOpArgs& args) {
  const std::byte* src = args.inputs[0].data;
  std::byte* dst = args.output.data;
  const auto bytes = static_cast<std::int64_t>(args.output.desc->bytes());
  if (src == dst) return;
  // Nothing forbids a memory plan from overlapping a reshape's output with its input; only
  // disjoint buffers can be copied in parallel pieces.
  if (dst < src + bytes && src < dst + bytes) {
    std::memmove(dst, src, bytes);
    return;
  }
  parallel_chunks(bytes, copy_chunk_bytes, [&](std::int64_t begin, std::int64_t count) {
    std::memcpy(dst + begin, src + begin, count);
  });
}

void cpu_transpose(const HostOpArgs& args) {
  with_element_bits(size_of(args.output.dtype()), [&](auto element) {
    transpose<decltype(element)>(args.inputs[0], args.output, args.node);
  });
}

void cpu_strided_gather(const HostOpArgs& args) {
  const HostTensor& x = args.inputs[0];
  const StridedView view = strided_view(args.node, x.shape());
  with_element_bits(size_of(x.dtype()), [&](auto element) { gather_rows<decltype(element)>(x, args.output, view); });
}

void cpu_pad(const HostOpArgs& args) {
  const auto& p = std::get<PadParams>(args.node.params);
  with_element_bits(size_of(args.output.dtype()),
                    [&](auto element) { pad_rows<decltype(element)>(args.inputs[0], args.output, p); });
}

void cpu_concat(const HostOpArgs& args) {
  const std::int64_t axis = std::get<ConcatParams>(args.node.params).axis;
  const auto element = static_cast<std::int64_t>(size_of(args.output.dtype()));
  const AxisSplit y = split_at_axis(args.output.shape(), axis);
  std::vector<std::int64_t> axis_offset;  // where each input starts along the concat axis
  std::vector<std::int64_t> block_bytes;  // one outer slice of each input
  std::int64_t offset = 0;
  for (const HostTensor& x : args.inputs) {
    const std::int64_t extent = split_at_axis(x.shape(), axis).axis;
    axis_offset.push_back(offset);
    block_bytes.push_back(extent * y.inner * element);
    offset += extent;
  }
  const auto inputs = static_cast<std::int64_t>(args.inputs.size());
  const auto work = tbb::blocked_range2d<std::int64_t>(0, y.outer, 0, inputs);
  tbb::parallel_for(work, [&](const tbb::blocked_range2d<std::int64_t>& range) {
    for (std::int64_t outer = range.rows().begin(); outer != range.rows().end(); ++outer) {
      for (std::int64_t input = range.cols().begin(); input != range.cols().end(); ++input) {
        const std::int64_t block = block_bytes[input];
        const std::int64_t y_index = (outer * y.axis + axis_offset[input]) * y.inner;
        std::memcpy(args.output.data + y_index * element, args.inputs[input].data + outer * block,
                    block);
      }
    }
  });
}

}  // namespace porta::detail
