// Inputs and output share a dtype, so elements move as bytes: exact, NaN payloads included.
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

// Output row `row` (every output index but the last) gathers its elements from x with the
// strides of the input dimensions the output dimensions come from.
template <class Element>
void transpose_rows(const HostTensor& x, const HostTensor& y,
                    const std::vector<std::int64_t>& perm) {
  const Shape& y_shape = y.shape();
  const Shape x_strides = contiguous_strides(x.shape());
  const std::size_t last = y_shape.size() - 1;
  const std::int64_t length = y_shape[last];
  const std::int64_t step = x_strides[perm[last]];
  const auto* src = reinterpret_cast<const Element*>(x.data);
  auto* dst = reinterpret_cast<Element*>(y.data);
  const auto rows = tbb::blocked_range<std::int64_t>(0, y.numel() / length);
  tbb::parallel_for(rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t row = range.begin(); row != range.end(); ++row) {
      std::int64_t rest = row, x_index = 0;
      for (std::size_t i = last; i-- > 0;) {
        x_index += rest % y_shape[i] * x_strides[perm[i]];
        rest /= y_shape[i];
      }
      Element* y_row = dst + row * length;
      for (std::int64_t j = 0; j < length; ++j) y_row[j] = src[x_index + j * step];
    }
  });
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
  const auto& perm = std::get<TransposeParams>(args.node.params).perm;
  const HostTensor& x = args.inputs[0];
  const HostTensor& y = args.output;
  if (y.numel() == 0) return;
  if (y.shape().empty()) {
    std::memcpy(y.data, x.data, y.desc->bytes());
  } else if (size_of(x.dtype()) == 4) {
    transpose_rows<std::uint32_t>(x, y, perm);
  } else {
    transpose_rows<std::uint16_t>(x, y, perm);
  }
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
