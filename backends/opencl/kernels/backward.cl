// The backward ops and the fused loss (docs/training.md), in f32 arithmetic. Their formulas are those of
// core/runtime/backward_math.h, which the C++, CUDA and HIP kernels share and the OpenCL backend puts
// before this file.

__kernel void activation_backward(TENSOR(x), TENSOR(dy), TENSOR(dx), long n, int kind, float a, float b,
                                  int gelu_tanh) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const ActivationGradient f = {kind, a, b, gelu_tanh};
  const float d = activation_derivative(f, load_value(TENSOR_PTR(storage_t, x), i));
  store_value(TENSOR_PTR(storage_t, dx), i, load_value(TENSOR_PTR(storage_t, dy), i) * d);
}

// A work-item per input element of the NCHW planes; window geometry as in pool.cl: kernel, stride,
// top/left pad, dilation.
__kernel void max_pool2d_backward(TENSOR(x), TENSOR(dy), TENSOR(dx), long planes, long h, long w, long p, long q,
                                  long kh, long kw, long sh, long sw, long pt, long pl, long dh, long dw) {
  const long i = get_global_id(0);
  if (i >= planes * h * w) return;
  const long plane = i / (h * w), ih = (i / w) % h, iw = i % w;
  const PoolWindow window = {{kh, kw}, {sh, sw}, {pt, pl}, {dh, dw}};
  const float sum = max_pool_input_gradient(window, h, w, p, q, ih, iw, TENSOR_PTR(storage_t, x) + plane * h * w,
                                            TENSOR_PTR(storage_t, dy) + plane * p * q);
  store_value(TENSOR_PTR(storage_t, dx), i, sum);
}

// A work-item per filter tap (channel, r, s) of depthwise_filter_gradient, over NCHW planes, the
// images in order.
__kernel void depthwise_filter_gradient(TENSOR(x), TENSOR(dy), TENSOR(dw), long n, long c, long h, long w, long p,
                                        long q, long r, long s, long sh, long sw, long pt, long pl, long dh,
                                        long dl) {
  const long i = get_global_id(0);
  if (i >= c * r * s) return;
  const long channel = i / (r * s);
  const ConvWindow window = {{sh, sw}, {pt, pl}, {dh, dl}};
  float sum = 0.0f;
  for (long image = 0; image < n; ++image) {
    const long plane = image * c + channel;
    sum += depthwise_tap_gradient(window, h, w, p, q, i / s % r, i % s, TENSOR_PTR(storage_t, x) + plane * h * w,
                                  TENSOR_PTR(storage_t, dy) + plane * p * q);
  }
  store_value(TENSOR_PTR(storage_t, dw), i, sum);
}

// A work-item per row of `classes` values.
__kernel void softmax_cross_entropy(TENSOR(z), TENSOR(labels), TENSOR(loss), long rows, long classes) {
  const long row = get_global_id(0);
  if (row >= rows) return;
  const float total = cross_entropy_row(classes, TENSOR_PTR(storage_t, z) + row * classes,
                                        TENSOR_PTR(storage_t, labels) + row * classes);
  store_value(TENSOR_PTR(storage_t, loss), row, total);
}

// The class a row's i64 (wide) or i32 label names; the host has checked every label is in
// [0, classes) before the launch, as it does gather's indices.
long label_class(TENSOR(labels), long row, int wide) {
  return wide ? TENSOR_PTR(long, labels)[row] : (long)TENSOR_PTR(int, labels)[row];
}

// logsumexp(z) - z[label] per row: the cross-entropy against i64/i32 class labels, one per row.
__kernel void softmax_cross_entropy_index(TENSOR(z), TENSOR(labels), TENSOR(loss), long rows, long classes,
                                          int wide) {
  const long row = get_global_id(0);
  if (row >= rows) return;
  const long label = label_class(labels_base, labels_offset, row, wide);
  store_value(TENSOR_PTR(storage_t, loss), row,
              cross_entropy_index_row(classes, TENSOR_PTR(storage_t, z) + row * classes, label));
}

// dy (softmax(z) - one_hot(label)) per row of `classes` logits: the gradient of the above.
__kernel void softmax_cross_entropy_backward(TENSOR(z), TENSOR(labels), TENSOR(dy), TENSOR(dz), long rows,
                                             long classes, int wide) {
  const long row = get_global_id(0);
  if (row >= rows) return;
  __global const storage_t* zp = TENSOR_PTR(storage_t, z) + row * classes;
  __global storage_t* dzp = TENSOR_PTR(storage_t, dz) + row * classes;
  const long label = label_class(labels_base, labels_offset, row, wide);
  const float d = load_value(TENSOR_PTR(storage_t, dy), row);
  const float top = row_max(classes, zp), sum = exp_sum_row(classes, zp, top);
  for (long c = 0; c < classes; ++c)
    store_value(dzp, c, cross_entropy_index_gradient(load_value(zp, c), top, sum, c == label, d));
}
