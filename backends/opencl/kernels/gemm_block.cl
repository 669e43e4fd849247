// The CPU GEMM block shared by matmul_vector and conv2d_gemm: a CPU core runs a work-item's loop,
// so the work-item does the SIMD, in float vectors. A work-group computes a BLOCK_M x BLOCK_N
// block of the product; each KC-deep slice of A and B is first packed into local memory (on a
// CPU, a buffer that stays in L1/L2), which also removes the cache-set conflicts of walking B's
// columns at a power-of-two stride. Each work-item keeps WORK_M rows x VW columns in registers.
// Build options: VW, WORK_M, GROUP_X, GROUP_Y, KC (a multiple of VW). The helpers are inline so
// that the accumulators stay in registers.
#define BLOCK_M (GROUP_Y * WORK_M)
#define BLOCK_N (GROUP_X * VW)
#define GROUP_SIZE (GROUP_X * GROUP_Y)

// Rows [row0, row0 + BLOCK_M) x columns [k0, k0 + KC) of row-major A [m, k]. Elements outside A
// pack as zero, so edge blocks need no other special case; inside, a vector at a time.
static inline void pack_a(__local float (*a_pack)[KC], __global const storage_t* ap, long m, long k, long row0, long k0, int lid) {
  if (k0 + KC <= k && row0 + BLOCK_M <= m) {
    for (int l = lid; l < BLOCK_M * (KC / VW); l += GROUP_SIZE) {
      const int row = l / (KC / VW), kk = l % (KC / VW) * VW;
      CAT(vstore, VW)(load_vector(ap, (row0 + row) * k + k0 + kk), 0, &a_pack[row][kk]);
    }
    return;
  }
  for (int l = lid; l < BLOCK_M * KC; l += GROUP_SIZE) {
    const int row = l / KC, kk = l % KC;
    const long gr = row0 + row, gk = k0 + kk;
    a_pack[row][kk] = gr < m && gk < k ? load_value(ap, gr * k + gk) : 0.0f;
  }
}

// The same block of op(A) when A is stored [k, m].
static inline void pack_a_transposed(__local float (*a_pack)[KC], __global const storage_t* ap, long m, long k, long row0, long k0,
                       int lid) {
  for (int l = lid; l < BLOCK_M * KC; l += GROUP_SIZE) {
    const int row = l % BLOCK_M, kk = l / BLOCK_M;  // neighbouring work-items read neighbouring rows
    const long gr = row0 + row, gk = k0 + kk;
    a_pack[row][kk] = gr < m && gk < k ? load_value(ap, gk * m + gr) : 0.0f;
  }
}

// Rows [k0, k0 + KC) x columns [col0, col0 + BLOCK_N) of row-major B [k, n].
static inline void pack_b(__local float (*b_pack)[BLOCK_N], __global const storage_t* bp, long k, long n, long k0, long col0, int lid) {
  if (k0 + KC <= k && col0 + BLOCK_N <= n) {
    for (int l = lid; l < KC * GROUP_X; l += GROUP_SIZE) {
      const int kk = l / GROUP_X, col = l % GROUP_X * VW;
      CAT(vstore, VW)(load_vector(bp, (k0 + kk) * n + col0 + col), 0, &b_pack[kk][col]);
    }
    return;
  }
  for (int l = lid; l < KC * BLOCK_N; l += GROUP_SIZE) {
    const int kk = l / BLOCK_N, col = l % BLOCK_N;
    const long gc = col0 + col, gk = k0 + kk;
    b_pack[kk][col] = gc < n && gk < k ? load_value(bp, gk * n + gc) : 0.0f;
  }
}

// acc += this work-item's WORK_M x VW part of a_pack x b_pack.
static inline void multiply_packed(__local const float (*a_pack)[KC], __local const float (*b_pack)[BLOCK_N], floatv* acc, int lx,
                     int ly) {
  for (int kk = 0; kk < KC; ++kk) {
    const floatv bv = CAT(vload, VW)(0, &b_pack[kk][lx * VW]);
    for (int i = 0; i < WORK_M; ++i) acc[i] = fma((floatv)(a_pack[ly * WORK_M + i][kk]), bv, acc[i]);
  }
}
