// Reductions over any set of axes: a work-item per output element folds its reduced elements in f32.
// The kept and reduced dimensions come as shapes with input strides (core/runtime/op_math.hpp's
// ReduceSplit); `contiguous` marks one reduced run of stride 1.

#define REDUCE_SUM 0
#define REDUCE_MEAN 1
#define REDUCE_MAX 2
#define REDUCE_MIN 3

__kernel void reduce(TENSOR(x), TENSOR(y), long outputs, long count, int op, int contiguous, long8 kept_shape,
                     long8 kept_strides, long8 reduced_shape, long8 reduced_strides) {
  const long o = get_global_id(0);
  if (o >= outputs) return;
  const long base = strided_index(o, kept_shape, kept_strides);
  float acc = op == REDUCE_MAX ? -INFINITY : op == REDUCE_MIN ? INFINITY : 0.0f;
  for (long r = 0; r < count; ++r) {
    const long i = base + (contiguous ? r : strided_index(r, reduced_shape, reduced_strides));
    const float v = load_value(TENSOR_PTR(storage_t, x), i);
    acc = op == REDUCE_MAX ? fmax(acc, v) : op == REDUCE_MIN ? fmin(acc, v) : acc + v;
  }
  store_value(TENSOR_PTR(storage_t, y), o, op == REDUCE_MEAN ? acc / (float)count : acc);
}
