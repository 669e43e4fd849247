// Attention, a work-item per query row and slice of ATTENTION_SLICE output columns: it walks the keys
// once with an online softmax (running max and sum, its partial output rescaled when the max grows:
// online_softmax_step, from backends/common/online_softmax.h), so no score is stored. Slices of one
// row recompute the row's scores: a row's output is too wide for private memory.
#define ATTENTION_SLICE 16

__kernel void attention(TENSOR(q), TENSOR(k), TENSOR(v), TENSOR(mask), TENSOR(y), long problems, long heads,
                        long queries, long keys, long depth, long width, float scale, int causal, int has_mask,
                        long mask_b, long mask_h, long mask_q, long mask_k) {
  const long slices = (width + ATTENTION_SLICE - 1) / ATTENTION_SLICE;
  const long item = get_global_id(0);
  if (item >= problems * queries * slices) return;
  const long c0 = item % slices * ATTENTION_SLICE, row = item / slices;  // row = bh * queries + i
  const long bh = row / queries, i = row % queries;
  const long columns = min((long)ATTENTION_SLICE, width - c0);
  const long visible = causal ? min(keys, i + 1) : keys;
  const __global storage_t* qp = TENSOR_PTR(storage_t, q) + row * depth;
  const __global storage_t* kp = TENSOR_PTR(storage_t, k) + bh * keys * depth;
  const __global storage_t* vp = TENSOR_PTR(storage_t, v) + bh * keys * width + c0;
  const __global storage_t* mp = TENSOR_PTR(storage_t, mask) + bh / heads * mask_b + bh % heads * mask_h + i * mask_q;
  float out[ATTENTION_SLICE];
  for (int c = 0; c < ATTENTION_SLICE; ++c) out[c] = 0.0f;
  float top = -INFINITY, sum = 0.0f;
  for (long j = 0; j < visible; ++j) {
    float s = 0.0f;
    for (long c = 0; c < depth; ++c) s += load_value(qp, c) * load_value(kp, j * depth + c);
    s *= scale;
    if (has_mask) s += load_value(mp, j * mask_k);
    if (s == -INFINITY) continue;  // a hidden key weighs 0
    const float p = online_softmax_step(s, &top, &sum, out, ATTENTION_SLICE);
    for (long c = 0; c < columns; ++c) out[c] += p * load_value(vp, j * width + c);
  }
  for (long c = 0; c < columns; ++c) store_value(TENSOR_PTR(storage_t, y), row * width + c0 + c, out[c] / sum);
}
