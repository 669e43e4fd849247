// The backward ops and the fused loss (docs/training.md). Arithmetic in f32. The formulas are those
// of core/runtime/backward_math.hpp, which the C++ and CUDA kernels share and OpenCL C cannot include.

// ACTIVATION_BACKWARD_* codes: the forward activation whose derivative multiplies dy.
#define GRAD_RELU 0
#define GRAD_CLIP 1          // a, b: min, max
#define GRAD_GELU 2          // tanh_form: the tanh approximation
#define GRAD_HARD_SIGMOID 3  // a, b: alpha, beta
#define GRAD_HARD_SWISH 4

float activation_derivative(int kind, float x, float a, float b, int tanh_form) {
  switch (kind) {
    case GRAD_RELU: return x > 0.0f ? 1.0f : 0.0f;
    case GRAD_CLIP: return x > a && x < b ? 1.0f : 0.0f;
    case GRAD_HARD_SIGMOID: {
      const float v = a * x + b;
      return v > 0.0f && v < 1.0f ? a : 0.0f;
    }
    case GRAD_HARD_SWISH: return x < -3.0f ? 0.0f : (x <= 3.0f ? x / 3.0f + 0.5f : 1.0f);
    default: {
      if (tanh_form) {
        const float c = 0.7978845608f, k = 0.044715f;  // sqrt(2 / pi)
        const float t = tanh(c * (x + k * x * x * x));
        return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * c * (1.0f + 3.0f * k * x * x);
      }
      return 0.5f * (1.0f + erf(x * M_SQRT1_2_F)) + x * exp(-0.5f * x * x) * 0.3989422804f;  // 1 / sqrt(2 pi)
    }
  }
}

__kernel void activation_backward(TENSOR(x), TENSOR(dy), TENSOR(dx), long n, int kind, float a, float b,
                                  int tanh_form) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const float d = activation_derivative(kind, load_value(TENSOR_PTR(storage_t, x), i), a, b, tanh_form);
  store_value(TENSOR_PTR(storage_t, dx), i, load_value(TENSOR_PTR(storage_t, dy), i) * d);
}

// Whether window (oh, ow) of an NCHW plane takes its first maximum at (ih, iw). Window geometry as in
// pool.cl: kernel, stride, top/left pad, dilation.
bool window_takes(__global const storage_t* xp, long h, long w, long oh, long ow, long ih, long iw, long kh, long kw,
                  long sh, long sw, long pt, long pl, long dh, long dw) {
  const long h0 = oh * sh - pt, w0 = ow * sw - pl;
  float best = 0.0f;
  long best_h = -1, best_w = -1;
  for (long r = 0; r < kh; ++r) {
    const long yh = h0 + r * dh;
    if (yh < 0 || yh >= h) continue;
    for (long s = 0; s < kw; ++s) {
      const long yw = w0 + s * dw;
      if (yw < 0 || yw >= w) continue;
      const float v = load_value(xp, yh * w + yw);
      if (best_h < 0 || v > best) best = v, best_h = yh, best_w = yw;
    }
  }
  return best_h == ih && best_w == iw;
}

// One work-item per input element gathers dy from the windows that took it: no atomics, and the
// same sum order everywhere.
__kernel void max_pool2d_backward(TENSOR(x), TENSOR(dy), TENSOR(dx), long planes, long h, long w, long p, long q,
                                  long kh, long kw, long sh, long sw, long pt, long pl, long dh, long dw) {
  const long i = get_global_id(0);
  if (i >= planes * h * w) return;
  const long plane = i / (h * w), ih = (i / w) % h, iw = i % w;
  __global const storage_t* xp = TENSOR_PTR(storage_t, x) + plane * h * w;
  __global const storage_t* dyp = TENSOR_PTR(storage_t, dy) + plane * p * q;
  float sum = 0.0f;
  for (long r = 0; r < kh; ++r) {
    const long rows = ih + pt - r * dh;  // oh * sh for the window whose tap r lands on ih
    if (rows < 0 || rows % sh != 0 || rows / sh >= p) continue;
    for (long s = 0; s < kw; ++s) {
      const long cols = iw + pl - s * dw;
      if (cols < 0 || cols % sw != 0 || cols / sw >= q) continue;
      const long oh = rows / sh, ow = cols / sw;
      if (window_takes(xp, h, w, oh, ow, ih, iw, kh, kw, sh, sw, pt, pl, dh, dw)) sum += load_value(dyp, oh * q + ow);
    }
  }
  store_value(TENSOR_PTR(storage_t, dx), i, sum);
}

// sum_c l_c (logsumexp(z) - z_c) per row of `classes` values: each term is a non-negative -log softmax.
__kernel void softmax_cross_entropy(TENSOR(z), TENSOR(labels), TENSOR(loss), long rows, long classes) {
  const long row = get_global_id(0);
  if (row >= rows) return;
  __global const storage_t* zp = TENSOR_PTR(storage_t, z) + row * classes;
  __global const storage_t* lp = TENSOR_PTR(storage_t, labels) + row * classes;
  float top = -INFINITY;
  for (long c = 0; c < classes; ++c) top = fmax(top, load_value(zp, c));
  float sum = 0.0f;
  for (long c = 0; c < classes; ++c) sum += exp(load_value(zp, c) - top);
  const float lse = top + log(sum);
  float total = 0.0f;
  for (long c = 0; c < classes; ++c) total += load_value(lp, c) * (lse - load_value(zp, c));
  store_value(TENSOR_PTR(storage_t, loss), row, total);
}

// The class a row's i64 (wide) or i32 label names, a negative one counted from the end; the host has
// checked every label is in [-classes, classes) before the launch.
long label_class(__global const uchar* labels_base, ulong labels_offset, long row, long classes, int wide) {
  const __global uchar* at = labels_base + labels_offset;
  const long label = wide ? ((const __global long*)at)[row] : (long)((const __global int*)at)[row];
  return label < 0 ? label + classes : label;
}

// log(sum_c exp(z_c)) of a row of `classes` values, the maximum taken out first.
float log_sum_exp_row(__global const storage_t* zp, long classes) {
  float top = -INFINITY;
  for (long c = 0; c < classes; ++c) top = fmax(top, load_value(zp, c));
  float sum = 0.0f;
  for (long c = 0; c < classes; ++c) sum += exp(load_value(zp, c) - top);
  return top + log(sum);
}

// logsumexp(z) - z[label] per row: the cross-entropy against i64/i32 class labels, one per row.
__kernel void softmax_cross_entropy_index(TENSOR(z), TENSOR(labels), TENSOR(loss), long rows, long classes,
                                          int wide) {
  const long row = get_global_id(0);
  if (row >= rows) return;
  __global const storage_t* zp = TENSOR_PTR(storage_t, z) + row * classes;
  const long label = label_class(labels_base, labels_offset, row, classes, wide);
  store_value(TENSOR_PTR(storage_t, loss), row, log_sum_exp_row(zp, classes) - load_value(zp, label));
}

// dy (softmax(z) - one_hot(label)) per row of `classes` logits: the gradient of the above.
__kernel void softmax_cross_entropy_backward(TENSOR(z), TENSOR(labels), TENSOR(dy), TENSOR(dz), long rows,
                                             long classes, int wide) {
  const long row = get_global_id(0);
  if (row >= rows) return;
  __global const storage_t* zp = TENSOR_PTR(storage_t, z) + row * classes;
  __global storage_t* dzp = TENSOR_PTR(storage_t, dz) + row * classes;
  const long label = label_class(labels_base, labels_offset, row, classes, wide);
  const float d = load_value(TENSOR_PTR(storage_t, dy), row);
  float top = -INFINITY;
  for (long c = 0; c < classes; ++c) top = fmax(top, load_value(zp, c));
  float sum = 0.0f;
  for (long c = 0; c < classes; ++c) sum += exp(load_value(zp, c) - top);
  for (long c = 0; c < classes; ++c)
    store_value(dzp, c, d * (exp(load_value(zp, c) - top) / sum - (c == label ? 1.0f : 0.0f)));
}
