// Ops that only move elements: they copy raw bits, so results are exact (NaN payloads included).
// Reshape is a buffer copy enqueued by the host.

// y[i] = x[strided_index(i)], where x_strides are the input's strides permuted into output order.
__kernel void transpose(TENSOR(x), TENSOR(y), long n, long8 y_shape, long8 x_strides) {
  const long i = get_global_id(0);
  if (i >= n) return;
  TENSOR_PTR(raw_t, y)[i] = TENSOR_PTR(raw_t, x)[strided_index(i, y_shape, x_strides)];
}

// One input of a concat: `outer` blocks of `block` elements land every `y_block` elements of y,
// starting at element `y_start`.
__kernel void concat_part(TENSOR(x), TENSOR(y), long outer, long block, long y_block, long y_start) {
  const long i = get_global_id(0);
  if (i >= outer * block) return;
  TENSOR_PTR(raw_t, y)[(i / block) * y_block + y_start + i % block] = TENSOR_PTR(raw_t, x)[i];
}
