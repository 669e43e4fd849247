// Direct 2-D convolution, NCHW input and [K, C/groups, R, S] weights, with the bias, residual
// and activation fused into the store; one work-item per output element. Grouped and depthwise
// convolutions are the same loop over their channel slice.
__kernel void conv2d(TENSOR(x), TENSOR(wt), TENSOR(bias), TENSOR(residual), TENSOR(y), int has_bias,
                     int has_residual, long n, long c,
                     long h, long w, long k, long r, long s, long p, long q, long sh, long sw, long pt,
                     long pl, long dh, long dw, long c_per_group, long k_per_group, int act) {
  const long i = get_global_id(0);
  if (i >= n * k * p * q) return;
  const long ow = i % q, oh = (i / q) % p, kk = (i / (p * q)) % k, nn = i / (k * p * q);
  const long first_channel = (kk / k_per_group) * c_per_group;
  __global const storage_t* xp = TENSOR_PTR(storage_t, x) + (nn * c + first_channel) * h * w;
  __global const storage_t* wp = TENSOR_PTR(storage_t, wt) + kk * c_per_group * r * s;
  float sum = has_bias ? load_value(TENSOR_PTR(storage_t, bias), kk) : 0.0f;
  for (long ci = 0; ci < c_per_group; ++ci) {
    for (long ri = 0; ri < r; ++ri) {
      const long ih = oh * sh - pt + ri * dh;
      if (ih < 0 || ih >= h) continue;  // zero padding
      for (long si = 0; si < s; ++si) {
        const long iw = ow * sw - pl + si * dw;
        if (iw < 0 || iw >= w) continue;
        sum = fma(load_value(xp, (ci * h + ih) * w + iw), load_value(wp, (ci * r + ri) * s + si), sum);
      }
    }
  }
  if (has_residual) sum += load_value(TENSOR_PTR(storage_t, residual), i);
  store_value(TENSOR_PTR(storage_t, y), i, activate(act, sum, 0.0f, 0.0f));
}

// Convolution as an implicit GEMM on CPU devices (see gemm_block.cl): per image and group,
// y[K/groups, P*Q] = w[K/groups, C/groups*R*S] x im2col(x)[C/groups*R*S, P*Q], where the im2col
// matrix is never stored: its KC-deep slices are gathered straight into local memory. A 1x1,
// stride-1, unpadded convolution's im2col matrix is x itself, and packs a vector at a time.
__kernel __attribute__((reqd_work_group_size(GROUP_X, GROUP_Y, 1)))
void conv2d_gemm(TENSOR(x), TENSOR(wt), TENSOR(bias), TENSOR(residual), TENSOR(y), int has_bias,
                 int has_residual, long c, long h, long w, long k,
                 long r, long s, long p, long q, long sh, long sw, long pt, long pl, long dh, long dw, long groups,
                 long c_per_group, long k_per_group, int act) {
  __local float a_pack[BLOCK_M][KC];
  __local float b_pack[KC][BLOCK_N];
  const long image = get_group_id(2) / groups, group = get_group_id(2) % groups;
  const long gemm_m = k_per_group, gemm_n = p * q, gemm_k = c_per_group * r * s;
  __global const storage_t* xp = TENSOR_PTR(storage_t, x) + (image * c + group * c_per_group) * h * w;
  __global const storage_t* wp = TENSOR_PTR(storage_t, wt) + group * k_per_group * gemm_k;
  const long first_filter = group * k_per_group;
  const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * GROUP_X + lx;
  const long block_row = get_group_id(1) * (long)BLOCK_M, block_col = get_group_id(0) * (long)BLOCK_N;
  const bool pointwise = r == 1 && s == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && p == h && q == w;

  floatv acc[WORK_M];
  for (int i = 0; i < WORK_M; ++i) acc[i] = (floatv)(0.0f);
  for (long k0 = 0; k0 < gemm_k; k0 += KC) {
    pack_a(a_pack, wp, gemm_m, gemm_k, block_row, k0, lid);
    if (pointwise) {
      pack_b(b_pack, xp, gemm_k, gemm_n, k0, block_col, lid);
    } else {
      for (int l = lid; l < KC * BLOCK_N; l += GROUP_SIZE) {
        const int kk = l / BLOCK_N, col = l % BLOCK_N;
        const long gc = block_col + col, gk = k0 + kk;
        float v = 0.0f;
        if (gc < gemm_n && gk < gemm_k) {
          const long ci = gk / (r * s), ri = gk / s % r, si = gk % s;
          const long ih = gc / q * sh - pt + ri * dh, iw = gc % q * sw - pl + si * dw;
          if (ih >= 0 && ih < h && iw >= 0 && iw < w) v = load_value(xp, (ci * h + ih) * w + iw);
        }
        b_pack[kk][col] = v;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    multiply_packed(a_pack, b_pack, acc, lx, ly);
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  __global storage_t* yp = TENSOR_PTR(storage_t, y) + (image * k + first_filter) * gemm_n;
  __global const storage_t* rp = TENSOR_PTR(storage_t, residual) + (image * k + first_filter) * gemm_n;
  for (int i = 0; i < WORK_M; ++i) {
    const long row = block_row + ly * WORK_M + i;
    if (row >= gemm_m) break;
    const float b = has_bias ? load_value(TENSOR_PTR(storage_t, bias), first_filter + row) : 0.0f;
    float values[VW];
    CAT(vstore, VW)(acc[i], 0, values);
    for (int j = 0; j < VW; ++j) {
      const long col = block_col + lx * VW + j;
      if (col >= gemm_n) break;
      const float sum = values[j] + b + (has_residual ? load_value(rp, row * gemm_n + col) : 0.0f);
      store_value(yp, row * gemm_n + col, activate(act, sum, 0.0f, 0.0f));
    }
  }
}
