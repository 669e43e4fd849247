// Softmax along one axis of [outer, axis, inner]; one work-item per (outer, inner) line.
__kernel void softmax(TENSOR(x), TENSOR(y), long outer, long axis, long inner) {
  const long line = get_global_id(0);
  if (line >= outer * inner) return;
  const long first = (line / inner) * axis * inner + line % inner;
  __global const storage_t* xp = TENSOR_PTR(storage_t, x) + first;
  __global storage_t* yp = TENSOR_PTR(storage_t, y) + first;
  // Subtracting the maximum keeps exp from overflowing; the result is unchanged.
  float max_value = -INFINITY;
  for (long a = 0; a < axis; ++a) max_value = fmax(max_value, load_value(xp, a * inner));
  float sum = 0.0f;
  for (long a = 0; a < axis; ++a) sum += exp(load_value(xp, a * inner) - max_value);
  for (long a = 0; a < axis; ++a) store_value(yp, a * inner, exp(load_value(xp, a * inner) - max_value) / sum);
}
