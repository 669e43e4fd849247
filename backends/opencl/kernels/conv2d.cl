// Direct 2-D convolution for depthwise and other thin groups: NCHW input, [K, C/groups, R, S]
// weights, the bias, residual and activation fused into the store. A work-item computes ROW_CHUNK
// neighbouring outputs of one output row (kept in step with ops/conv2d.cpp): its index divisions
// happen once, a filter row outside the image is skipped once, and the sums stay in registers.
#define ROW_CHUNK 16
__kernel void conv2d(TENSOR(x), TENSOR(wt), TENSOR(bias), TENSOR(residual), TENSOR(y), int has_bias,
                     int has_residual, long n, long c, long h, long w, long k, long r, long s, long p, long q,
                     long sh, long sw, long pt, long pl, long dh, long dw, long c_per_group, long k_per_group,
                     int act) {
  const long chunks = (q + ROW_CHUNK - 1) / ROW_CHUNK;
  const long item = get_global_id(0);
  if (item >= n * k * p * chunks) return;
  const long first_ow = item % chunks * ROW_CHUNK, row = item / chunks;  // row: (image * k + filter) * p + oh
  const long oh = row % p, filter = row / p % k, image = row / (p * k);
  __global const storage_t* xp = TENSOR_PTR(storage_t, x) + (image * c + filter / k_per_group * c_per_group) * h * w;
  __global const storage_t* wp = TENSOR_PTR(storage_t, wt) + filter * c_per_group * r * s;
  float acc[ROW_CHUNK];
  for (int j = 0; j < ROW_CHUNK; ++j) acc[j] = 0.0f;
  for (long ci = 0; ci < c_per_group; ++ci) {
    for (long ri = 0; ri < r; ++ri) {
      const long ih = oh * sh - pt + ri * dh;
      if (ih < 0 || ih >= h) continue;  // zero padding
      __global const storage_t* x_row = xp + (ci * h + ih) * w;
      for (long si = 0; si < s; ++si) {
        const float weight = load_value(wp, (ci * r + ri) * s + si);
        const long first_iw = first_ow * sw - pl + si * dw;
#pragma unroll
        for (int j = 0; j < ROW_CHUNK; ++j) {
          const long iw = first_iw + j * sw;
          if (iw >= 0 && iw < w) acc[j] = fma(load_value(x_row, iw), weight, acc[j]);
        }
      }
    }
  }
  const float b = has_bias ? load_value(TENSOR_PTR(storage_t, bias), filter) : 0.0f;
  __global storage_t* yp = TENSOR_PTR(storage_t, y) + row * q + first_ow;
  __global const storage_t* rp = TENSOR_PTR(storage_t, residual) + row * q + first_ow;
  for (int j = 0; j < ROW_CHUNK && first_ow + j < q; ++j)
    store_value(yp, j, activate(act, acc[j] + b + (has_residual ? load_value(rp, j) : 0.0f), 0.0f, 0.0f));
}

// im2col(x)'s rows [k0, k0 + kc) x columns [col0, col0 + BLOCK_N), gathered straight into
// b_pack: row gk is (channel, filter row, filter column), column gc is (output row, column).
// Each row's division is done once, and the columns walk (output row, column) by increments.
static inline void gather_im2col(__local float (*b_pack)[BLOCK_N], __global const storage_t* xp, long h, long w,
                                 long r, long s, long q, long sh, long sw, long pt, long pl, long dh, long dw,
                                 long k0, int kc, long col0, int cols) {
  const long oh0 = col0 / q, ow0 = col0 % q;
  for (int kk = 0; kk < kc; ++kk) {
    const long gk = k0 + kk, ci = gk / (r * s), ri = gk / s % r, si = gk % s;
    __global const storage_t* plane = xp + ci * h * w;
    const long ih0 = ri * dh - pt, iw0 = si * dw - pl;
    long oh = oh0, ow = ow0;
    for (int j = 0; j < BLOCK_N; ++j) {
      const long ih = oh * sh + ih0, iw = ow * sw + iw0;
      b_pack[kk][j] = j < cols && ih >= 0 && ih < h && iw >= 0 && iw < w ? load_value(plane, ih * w + iw) : 0.0f;
      if (++ow == q) {
        ow = 0;
        ++oh;
      }
    }
  }
}

// Convolution as an implicit GEMM on CPU devices (see gemm_block.cl): per image and group,
// y[K/groups, P*Q] = w[K/groups, C/groups*R*S] x im2col(x)[C/groups*R*S, P*Q], where the im2col
// matrix is never stored: its slices are gathered into local memory. A 1x1, stride-1, unpadded
// convolution's im2col matrix is x itself, and packs a vector at a time.
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void conv2d_gemm(TENSOR(x), TENSOR(wt), TENSOR(bias), TENSOR(residual), TENSOR(y), int has_bias,
                 int has_residual, long c, long h, long w, long k,
                 long r, long s, long p, long q, long sh, long sw, long pt, long pl, long dh, long dw, long groups,
                 long c_per_group, long k_per_group, int act) {
  __local float a_pack[BLOCK_M / MR][KC][MR];
  __local float b_pack[KC][BLOCK_N];
  __local float c_block[BLOCK_M][BLOCK_N];
  const long image = get_group_id(2) / groups, group = get_group_id(2) % groups;
  const long gemm_m = k_per_group, gemm_n = p * q, gemm_k = c_per_group * r * s;
  __global const storage_t* xp = TENSOR_PTR(storage_t, x) + (image * c + group * c_per_group) * h * w;
  __global const storage_t* wp = TENSOR_PTR(storage_t, wt) + group * k_per_group * gemm_k;
  const long first_filter = group * k_per_group;
  const long row0 = get_group_id(1) * (long)BLOCK_M, col0 = get_group_id(0) * (long)BLOCK_N;
  const int rows = (int)min((long)BLOCK_M, gemm_m - row0), cols = (int)min((long)BLOCK_N, gemm_n - col0);
  const bool pointwise = r == 1 && s == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && p == h && q == w;
  for (long k0 = 0; k0 < gemm_k; k0 += KC) {
    const int kc = (int)min((long)KC, gemm_k - k0);
    pack_a(a_pack, wp, gemm_m, gemm_k, row0, k0, kc, 0);
    if (pointwise) pack_b(b_pack, xp, gemm_k, gemm_n, k0, col0, kc, 0);
    else gather_im2col(b_pack, xp, h, w, r, s, q, sh, sw, pt, pl, dh, dw, k0, kc, col0, cols);
    multiply_block(a_pack, b_pack, c_block, kc, k0 > 0, rows, cols);
  }

  __global storage_t* yp = TENSOR_PTR(storage_t, y) + (image * k + first_filter) * gemm_n;
  __global const storage_t* rp = TENSOR_PTR(storage_t, residual) + (image * k + first_filter) * gemm_n;
  for (int i = 0; i < rows; ++i) {
    const long row = row0 + i;
    const float b = has_bias ? load_value(TENSOR_PTR(storage_t, bias), first_filter + row) : 0.0f;
    for (int j = 0; j < cols; ++j) {
      const long at = row * gemm_n + col0 + j;
      const float sum = c_block[i][j] + b + (has_residual ? load_value(rp, at) : 0.0f);
      store_value(yp, at, activate(act, sum, 0.0f, 0.0f));
    }
  }
}
