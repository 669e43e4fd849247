// The CPU GEMM block shared by matmul_vector and conv2d_gemm. A CPU device runs a work-group on
// one core, and a work-group of many work-items becomes loops whose private values live in
// memory; so here a work-group is one work-item, written the way a CPU GEMM is: it computes a
// BLOCK_M x BLOCK_N block of the product one KC-deep slice at a time, with op(A)'s slice packed
// into MR-row micro-panels and op(B)'s into rows, both in local memory (on a CPU, buffers that
// stay in L1/L2), and a micro-kernel whose MR x NV float vectors (VW lanes each) stay in
// registers. The block's sums wait in local memory between slices, in f32 whatever the storage.
// Build options: VW, NV, MR, BLOCK_M (a multiple of MR), BLOCK_N (a multiple of VW * NV), KC.
#define NR (VW * NV)

// Rows [row0, row0 + BLOCK_M) x columns [k0, k0 + kc) of op(A) into micro-panels
// a_pack[panel][kk][row in panel]. A is stored [m, k], or [k, m] when trans; rows past m pack as zero.
static inline void pack_a(__local float (*a_pack)[KC][MR], __global const storage_t* ap, long m, long k, long row0,
                          long k0, int kc, int trans) {
  for (int p = 0; p < BLOCK_M / MR; ++p) {
    for (int i = 0; i < MR; ++i) {
      const long row = row0 + p * MR + i;
      if (row >= m) {
        for (int kk = 0; kk < kc; ++kk) a_pack[p][kk][i] = 0.0f;
      } else if (trans) {
        for (int kk = 0; kk < kc; ++kk) a_pack[p][kk][i] = load_value(ap, (k0 + kk) * m + row);
      } else {
        __global const storage_t* src = ap + row * k + k0;
        for (int kk = 0; kk < kc; ++kk) a_pack[p][kk][i] = load_value(src, kk);
      }
    }
  }
}

// Rows [k0, k0 + kc) x columns [col0, col0 + BLOCK_N) of op(B). B is stored [k, n], or [n, k]
// when trans; columns past n pack as zero.
static inline void pack_b(__local float (*b_pack)[BLOCK_N], __global const storage_t* bp, long k, long n, long k0,
                          long col0, int kc, int trans) {
  const int cols = (int)min((long)BLOCK_N, n - col0);
  if (trans) {
    for (int c = 0; c < BLOCK_N; ++c) {
      if (c >= cols) {
        for (int kk = 0; kk < kc; ++kk) b_pack[kk][c] = 0.0f;
        continue;
      }
      __global const storage_t* src = bp + (col0 + c) * k + k0;
      for (int kk = 0; kk < kc; ++kk) b_pack[kk][c] = load_value(src, kk);
    }
    return;
  }
  for (int kk = 0; kk < kc; ++kk) {
    __global const storage_t* src = bp + (k0 + kk) * n + col0;
    if (cols == BLOCK_N) {
      for (int c = 0; c < BLOCK_N; c += VW) CAT(vstore, VW)(load_vector(src, c), 0, &b_pack[kk][c]);
    } else {
      for (int c = 0; c < BLOCK_N; ++c) b_pack[kk][c] = c < cols ? load_value(src, c) : 0.0f;
    }
  }
}

// c_block (+)= a_pack x b_pack over the first `rows` x `cols` of the block (micro-tiles wholly
// outside are skipped). The unrolled loops keep the MR x NV accumulators in registers.
static inline void multiply_block(__local const float (*a_pack)[KC][MR], __local const float (*b_pack)[BLOCK_N],
                                  __local float (*c_block)[BLOCK_N], int kc, int accumulate, int rows, int cols) {
  for (int i0 = 0; i0 < rows; i0 += MR) {
    __local const float (*panel)[MR] = a_pack[i0 / MR];
    for (int j0 = 0; j0 < cols; j0 += NR) {
      floatv acc[MR][NV];
#pragma unroll
      for (int i = 0; i < MR; ++i)
#pragma unroll
        for (int j = 0; j < NV; ++j)
          acc[i][j] = accumulate ? CAT(vload, VW)(0, &c_block[i0 + i][j0 + j * VW]) : (floatv)(0.0f);
      for (int kk = 0; kk < kc; ++kk) {
        floatv bv[NV];
#pragma unroll
        for (int j = 0; j < NV; ++j) bv[j] = CAT(vload, VW)(0, &b_pack[kk][j0 + j * VW]);
#pragma unroll
        for (int i = 0; i < MR; ++i) {
          const floatv av = (floatv)(panel[kk][i]);
#pragma unroll
          for (int j = 0; j < NV; ++j) acc[i][j] = fma(av, bv[j], acc[i][j]);
        }
      }
#pragma unroll
      for (int i = 0; i < MR; ++i)
#pragma unroll
        for (int j = 0; j < NV; ++j) CAT(vstore, VW)(acc[i][j], 0, &c_block[i0 + i][j0 + j * VW]);
    }
  }
}
