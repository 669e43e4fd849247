// Inference batch normalization over channel dimension 1: x is [outer, channels, inner].
__kernel void batchnorm(TENSOR(x), TENSOR(scale), TENSOR(bias), TENSOR(mean), TENSOR(var), TENSOR(y),
                        long n, long channels, long inner, float epsilon) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const long c = (i / inner) % channels;
  const float s = load_value(TENSOR_PTR(storage_t, scale), c);
  const float b = load_value(TENSOR_PTR(storage_t, bias), c);
  const float m = load_value(TENSOR_PTR(storage_t, mean), c);
  const float v = load_value(TENSOR_PTR(storage_t, var), c);
  const float xv = load_value(TENSOR_PTR(storage_t, x), i);
  store_value(TENSOR_PTR(storage_t, y), i, s * (xv - m) / sqrt(v + epsilon) + b);
}
