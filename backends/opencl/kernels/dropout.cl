// Dropout: the mask of backends/common/philox.h (put before this file by kernel_programs.cpp), the
// kept elements scaled in f32. A work-item per four elements, so that one Philox block serves the
// four draws of a span-1 mask. seed, threshold, span and offset arrive as long and int: their bits are
// Philox's.
__kernel void dropout(TENSOR(x), TENSOR(step), TENSOR(y), long n, ulong seed, uint threshold, float scale,
                      ulong span, ulong offset) {
  const long first = 4 * (long)get_global_id(0);
  if (first >= n) return;
  DropoutCursor c;
  dropout_start(&c, seed, dropout_step(TENSOR_PTR(float, step)[0]), threshold, span, offset, (ulong)first);
  const long end = min(first + 4, n);
  for (long i = first; i < end; ++i) {
    if (i > first) dropout_advance(&c);
    const float v = dropout_cursor_keeps(&c) ? load_value(TENSOR_PTR(storage_t, x), i) * scale : 0.0f;
    store_value(TENSOR_PTR(storage_t, y), i, v);
  }
}
