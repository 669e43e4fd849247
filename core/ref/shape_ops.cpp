// Inputs and output share a dtype, so elements move as bytes: exact, NaN payloads included.
#include <cstring>
#include <variant>

#include "core/ref/kernels.hpp"
#include "core/runtime/op_math.hpp"

namespace porta::detail {

// memmove: nothing forbids a memory plan from placing a reshape's output over its input.
void ref_reshape(const HostOpArgs& args) {
  std::memmove(args.output.data, args.inputs[0].data, args.output.desc->bytes());
}

// Transpose, Slice and Expand: each output element is copied from where the strided view says.
void ref_strided_gather(const HostOpArgs& args) {
  const StridedView view = strided_view(args.node, args.inputs[0].shape());
  const std::size_t element = size_of(args.output.dtype());
  for (std::int64_t y_index = 0; y_index < args.output.numel(); ++y_index) {
    std::int64_t rest = y_index, x_index = view.offset;
    for (std::size_t d = view.extent.size(); d-- > 0;) {
      x_index += (rest % view.extent[d]) * view.stride[d];
      rest /= view.extent[d];
    }
    std::memcpy(args.output.data + y_index * element, args.inputs[0].data + x_index * element, element);
  }
}

void ref_pad(const HostOpArgs& args) {
  const auto& p = std::get<PadParams>(args.node.params);
  const Shape& x_shape = args.inputs[0].shape();
  const Shape& y_shape = args.output.shape();
  const Shape x_strides = contiguous_strides(x_shape);
  const std::size_t element = size_of(args.output.dtype());
  const std::uint64_t value = storage_bits(p.value, args.output.dtype());
  for (std::int64_t y_index = 0; y_index < args.output.numel(); ++y_index) {
    std::int64_t rest = y_index, x_index = 0;
    for (std::size_t d = y_shape.size(); d-- > 0 && x_index >= 0;) {
      const std::int64_t from = pad_source(rest % y_shape[d] - p.pads[d], x_shape[d], p.mode);
      x_index = from < 0 ? -1 : x_index + from * x_strides[d];
      rest /= y_shape[d];
    }
    std::byte* y = args.output.data + y_index * element;
    if (x_index < 0) {
      std::memcpy(y, &value, element);  // little-endian: the low bytes hold the narrower dtypes
    } else {
      std::memcpy(y, args.inputs[0].data + x_index * element, element);
    }
  }
}

void ref_concat(const HostOpArgs& args) {
  const std::int64_t axis = std::get<ConcatParams>(args.node.params).axis;
  const std::size_t element = size_of(args.output.dtype());
  const AxisSplit y = split_at_axis(args.output.shape(), axis);
  std::int64_t axis_offset = 0;  // where the current input starts along the concat axis
  for (const HostTensor& x : args.inputs) {
    const AxisSplit split = split_at_axis(x.shape(), axis);
    const std::size_t block = split.axis * split.inner * element;  // one outer slice of x
    for (std::int64_t outer = 0; outer < split.outer; ++outer) {
      const std::int64_t y_index = (outer * y.axis + axis_offset) * y.inner;
      std::memcpy(args.output.data + y_index * element, x.data + outer * block, block);
    }
    axis_offset += split.axis;
  }
}

}  // namespace porta::detail
