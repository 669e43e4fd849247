// Ops that only move elements: they copy raw bits, so results are exact (NaN payloads included).
// Reshape is a buffer copy enqueued by the host.

// Transpose, Slice and Expand: y[i] = x[x_start + strided_index(i)], the strides those of x
// permuted into output order, stepped (negative: reversed) or 0 along a broadcast.
__kernel void strided_gather(TENSOR(x), TENSOR(y), long n, long8 y_shape, long8 x_strides, long x_start) {
  const long i = get_global_id(0);
  if (i >= n) return;
  TENSOR_PTR(raw_t, y)[i] = TENSOR_PTR(raw_t, x)[x_start + strided_index(i, y_shape, x_strides)];
}

// The input coordinate a pad reads for input coordinate i (which may lie outside), or -1 for the
// constant: porta/ops.hpp's pad_source, modes numbered as PadMode (constant, reflect, edge).
long pad_source(long i, long dim, int mode) {
  if (i >= 0 && i < dim) return i;
  if (mode == 0) return -1;
  if (mode == 2) return i < 0 ? 0 : dim - 1;
  return i < 0 ? -i : 2 * (dim - 1) - i;
}

// `value` holds the constant's storage bits.
__kernel void pad(TENSOR(x), TENSOR(y), long n, long8 y_shape, long8 x_shape, long8 begin, int mode, long value) {
  const long i = get_global_id(0);
  if (i >= n) return;
  long y_dims[8], x_dims[8], begins[8];
  vstore8(y_shape, 0, y_dims);
  vstore8(x_shape, 0, x_dims);
  vstore8(begin, 0, begins);
  long rest = i, offset = 0, stride = 1;
  for (int d = 7; d >= 0; --d) {
    const long from = pad_source(rest % y_dims[d] - begins[d], x_dims[d], mode);
    if (from < 0) {
      TENSOR_PTR(raw_t, y)[i] = (raw_t)value;
      return;
    }
    offset += from * stride;
    stride *= x_dims[d];
    rest /= y_dims[d];
  }
  TENSOR_PTR(raw_t, y)[i] = TENSOR_PTR(raw_t, x)[offset];
}

// One input of a concat: `outer` blocks of `block` elements land every `y_block` elements of y,
// starting at element `y_start`.
__kernel void concat_part(TENSOR(x), TENSOR(y), long outer, long block, long y_block, long y_start) {
  const long i = get_global_id(0);
  if (i >= outer * block) return;
  TENSOR_PTR(raw_t, y)[(i / block) * y_block + y_start + i % block] = TENSOR_PTR(raw_t, x)[i];
}
