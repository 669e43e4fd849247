// What porta adds, in place, after a vendor library's GEMM or convolution (impl=vendor) where
// the library cannot fuse it: Gemm's beta * C and activation, a convolution's bias, residual and activation.
// One work-item per element of y.

// y[i, j] = act(y[i, j] + beta * C[i, j]), C broadcast to [m, n] through its two strides.
__kernel void gemm_epilogue(TENSOR(y), TENSOR(c), long m, long n, int has_c, float beta, long c_row_stride,
                            long c_col_stride, int act) {
  const long i = get_global_id(0);
  if (i >= m * n) return;
  __global storage_t* yp = TENSOR_PTR(storage_t, y);
  float v = load_value(yp, i);
  if (has_c) v += beta * load_value(TENSOR_PTR(storage_t, c), i / n * c_row_stride + i % n * c_col_stride);
  store_value(yp, i, activate(act, v, 0.0f, 0.0f));
}

// y[image, channel, ...] = act(y + bias[channel] + residual), `plane` elements per channel.
__kernel void conv_epilogue(TENSOR(y), TENSOR(bias), TENSOR(residual), long total, long channels, long plane,
                            int has_bias, int has_residual, int act) {
  const long i = get_global_id(0);
  if (i >= total) return;
  __global storage_t* yp = TENSOR_PTR(storage_t, y);
  float v = load_value(yp, i);
  if (has_bias) v += load_value(TENSOR_PTR(storage_t, bias), i / plane % channels);
  if (has_residual) v += load_value(TENSOR_PTR(storage_t, residual), i);
  store_value(yp, i, activate(act, v, 0.0f, 0.0f));
}
