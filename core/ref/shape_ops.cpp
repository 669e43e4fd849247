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

void ref_transpose(const HostOpArgs& args) {
  const auto& perm = std::get<TransposeParams>(args.node.params).perm;
  const HostTensor& x = args.inputs[0];
  const Shape x_strides = contiguous_strides(x.shape());
  const Shape& y_shape = args.output.shape();
  const std::size_t element = size_of(x.dtype());
  for (std::int64_t y_index = 0; y_index < args.output.numel(); ++y_index) {
    // Output coordinate i, peeled off from the last dimension, steps input dimension perm[i].
    std::int64_t rest = y_index, x_index = 0;
    for (std::size_t i = y_shape.size(); i-- > 0;) {
      x_index += (rest % y_shape[i]) * x_strides[perm[i]];
      rest /= y_shape[i];
    }
    std::memcpy(args.output.data + y_index * element, x.data + x_index * element, element);
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
