// Layer and RMS normalisation: a work-item per row of `n` elements, in f32, in two passes (the mean,
// then the spread about it). The mean is taken of x - x[0] and x[0] added back: a row of equal values then
// has a mean of exactly that value and normalises to exactly 0, not to a rounding magnified by 1/sqrt(epsilon).

__kernel void normalise(TENSOR(x), TENSOR(scale), TENSOR(bias), TENSOR(y), long rows, long n, float epsilon, int rms,
                        int has_bias) {
  const long row = get_global_id(0);
  if (row >= rows) return;
  const __global storage_t* xp = TENSOR_PTR(storage_t, x) + row * n;
  float mean = 0.0f;
  if (!rms) {
    const float shift = load_value(xp, 0);
    for (long i = 0; i < n; ++i) mean += load_value(xp, i) - shift;
    mean = shift + mean / (float)n;
  }
  float spread = 0.0f;
  for (long i = 0; i < n; ++i) {
    const float d = load_value(xp, i) - mean;
    spread += d * d;
  }
  const float inv = 1.0f / sqrt(spread / (float)n + epsilon);
  for (long i = 0; i < n; ++i) {
    float v = (load_value(xp, i) - mean) * inv * load_value(TENSOR_PTR(storage_t, scale), i);
    if (has_bias) v += load_value(TENSOR_PTR(storage_t, bias), i);
    store_value(TENSOR_PTR(storage_t, y), row * n + i, v);
  }
}
