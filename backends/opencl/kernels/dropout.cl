// Dropout: the mask of backends/common/philox.h (put before this file by kernel_programs.cpp), the
// kept elements scaled in f32. seed and threshold arrive as long and int: their bits are Philox's.
__kernel void dropout(TENSOR(x), TENSOR(step), TENSOR(y), long n, ulong seed, uint threshold, float scale) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const uint s = dropout_step(TENSOR_PTR(float, step)[0]);
  const float v = dropout_keeps(seed, s, (ulong)i, threshold) ? load_value(TENSOR_PTR(storage_t, x), i) * scale : 0.0f;
  store_value(TENSOR_PTR(storage_t, y), i, v);
}
