// 2-D pooling over NCHW planes; one work-item per output element. Window geometry, in order:
// kernel h/w, stride h/w, pad top/left/bottom/right, dilation h/w.


__kernel void max_pool2d(TENSOR(x), TENSOR(y), long planes, long h, long w, long p, long q, long kh,
                         long kw, long sh, long sw, long pt, long pl, long dh, long dw) {
  const long i = get_global_id(0);
  if (i >= planes * p * q) return;
  const long plane = i / (p * q), oh = (i / q) % p, ow = i % q;
  const long h0 = oh * sh - pt, w0 = ow * sw - pl;
  __global const storage_t* xp = TENSOR_PTR(storage_t, x) + plane * h * w;
  float best = -INFINITY;  // a window over no input element yields -inf, as in PyTorch
  for (long r = 0; r < kh; ++r) {
    const long ih = h0 + r * dh;
    if (ih < 0 || ih >= h) continue;
    for (long s = 0; s < kw; ++s) {
      const long iw = w0 + s * dw;
      if (iw >= 0 && iw < w) best = fmax(best, load_value(xp, ih * w + iw));
    }
  }
  store_value(TENSOR_PTR(storage_t, y), i, best);
}

__kernel void avg_pool2d(TENSOR(x), TENSOR(y), long planes, long h, long w, long p, long q, long kh,
                         long kw, long sh, long sw, long pt, long pl, long pb, long pr, long dh, long dw,
                         int count_include_pad) {
  const long i = get_global_id(0);
  if (i >= planes * p * q) return;
  const long plane = i / (p * q), oh = (i / q) % p, ow = i % q;
  const long h0 = oh * sh - pt, w0 = ow * sw - pl;
  __global const storage_t* xp = TENSOR_PTR(storage_t, x) + plane * h * w;
  float sum = 0.0f;
  long inside = 0, padded = 0;  // ceil_mode windows can overhang the padding as well
  for (long r = 0; r < kh; ++r) {
    const long ih = h0 + r * dh;
    for (long s = 0; s < kw; ++s) {
      const long iw = w0 + s * dw;
      if (ih >= -pt && ih < h + pb && iw >= -pl && iw < w + pr) ++padded;
      if (ih >= 0 && ih < h && iw >= 0 && iw < w) {
        sum += load_value(xp, ih * w + iw);
        ++inside;
      }
    }
  }
  const long count = count_include_pad ? padded : inside;
  store_value(TENSOR_PTR(storage_t, y), i, count == 0 ? 0.0f : sum / (float)count);
}

__kernel void global_avg_pool(TENSOR(x), TENSOR(y), long planes, long area) {
  const long plane = get_global_id(0);
  if (plane >= planes) return;
  __global const storage_t* xp = TENSOR_PTR(storage_t, x) + plane * area;
  float sum = 0.0f;
  for (long i = 0; i < area; ++i) sum += load_value(xp, i);
  store_value(TENSOR_PTR(storage_t, y), plane, sum / (float)area);
}
