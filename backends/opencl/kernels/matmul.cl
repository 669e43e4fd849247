// Tiled GEMM for MatMul and Gemm: y = act(alpha * op(A) op(B) + beta * C), batched with numpy
// broadcast of the batch dimensions. Tile sizes are build options chosen per device (see
// backends/opencl/gemm_tiles.cpp): a work-group computes a TILE_M x TILE_N block of y, staging
// TILE_K-deep slices of A and B in local memory; each work-item keeps WORK_M x WORK_N results
// in registers. A work-item's rows and columns are strided by the work-group's extent, so
// neighbouring work-items touch neighbouring columns: coalesced loads on GPUs, and lanes that
// PoCL's work-group vectorizer turns into SIMD on CPUs.

#define THREADS_N (TILE_N / WORK_N)
#define THREADS_M (TILE_M / WORK_M)
#define THREADS (THREADS_N * THREADS_M)

__kernel __attribute__((reqd_work_group_size(THREADS_N, THREADS_M, 1)))
void matmul(TENSOR(a), TENSOR(b), TENSOR(c), TENSOR(y), long m, long n, long k, int trans_a,
            int trans_b, int has_c, float alpha, float beta, long c_row_stride, long c_col_stride,
            int act, long8 batch_shape, long8 a_batch_strides, long8 b_batch_strides) {
  __local float a_tile[TILE_K][TILE_M];
  __local float b_tile[TILE_K][TILE_N];
  const long batch = get_group_id(2);
  __global const storage_t* ap = TENSOR_PTR(storage_t, a) + strided_index(batch, batch_shape, a_batch_strides);
  __global const storage_t* bp = TENSOR_PTR(storage_t, b) + strided_index(batch, batch_shape, b_batch_strides);
  __global storage_t* yp = TENSOR_PTR(storage_t, y) + batch * m * n;
  const int tx = get_local_id(0), ty = get_local_id(1), lid = ty * THREADS_N + tx;
  const long row0 = get_group_id(1) * (long)TILE_M, col0 = get_group_id(0) * (long)TILE_N;

  float acc[WORK_M][WORK_N];
  for (int i = 0; i < WORK_M; ++i)
    for (int j = 0; j < WORK_N; ++j) acc[i][j] = 0.0f;

  for (long k0 = 0; k0 < k; k0 += TILE_K) {
    // Elements outside op(A) or op(B) load as zero, so edge tiles need no other special case.
    for (int l = lid; l < TILE_M * TILE_K; l += THREADS) {
      const int row = l / TILE_K, kk = l % TILE_K;
      const long gr = row0 + row, gk = k0 + kk;
      a_tile[kk][row] = gr < m && gk < k ? load_value(ap, trans_a ? gk * m + gr : gr * k + gk) : 0.0f;
    }
    for (int l = lid; l < TILE_K * TILE_N; l += THREADS) {
      const int kk = l / TILE_N, col = l % TILE_N;
      const long gc = col0 + col, gk = k0 + kk;
      b_tile[kk][col] = gc < n && gk < k ? load_value(bp, trans_b ? gc * k + gk : gk * n + gc) : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < TILE_K; ++kk) {
      float a_reg[WORK_M], b_reg[WORK_N];
      for (int i = 0; i < WORK_M; ++i) a_reg[i] = a_tile[kk][ty + i * THREADS_M];
      for (int j = 0; j < WORK_N; ++j) b_reg[j] = b_tile[kk][tx + j * THREADS_N];
      for (int i = 0; i < WORK_M; ++i)
        for (int j = 0; j < WORK_N; ++j) acc[i][j] = fma(a_reg[i], b_reg[j], acc[i][j]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  for (int i = 0; i < WORK_M; ++i) {
    const long row = row0 + ty + i * THREADS_M;
    if (row >= m) break;
    for (int j = 0; j < WORK_N; ++j) {
      const long col = col0 + tx + j * THREADS_N;
      if (col >= n) break;
      float v = alpha * acc[i][j];
      if (has_c) v += beta * load_value(TENSOR_PTR(storage_t, c), row * c_row_stride + col * c_col_stride);
      store_value(yp, row * n + col, activate(act, v, 0.0f, 0.0f));
    }
  }
}

// The same product for CPU devices, one work-item per BLOCK_M x BLOCK_N block (see gemm_block.cl).
// The loop runs once even when k is 0, so that the block is zeroed.
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void matmul_vector(TENSOR(a), TENSOR(b), TENSOR(c), TENSOR(y), long m, long n, long k, int trans_a,
                   int trans_b, int has_c, float alpha, float beta, long c_row_stride, long c_col_stride,
                   int act, long8 batch_shape, long8 a_batch_strides, long8 b_batch_strides) {
  __local float a_pack[BLOCK_M / MR][KC][MR];
  __local float b_pack[KC][BLOCK_N];
  __local float c_block[BLOCK_M][BLOCK_N];
  const long batch = get_group_id(2);
  __global const storage_t* ap = TENSOR_PTR(storage_t, a) + strided_index(batch, batch_shape, a_batch_strides);
  __global const storage_t* bp = TENSOR_PTR(storage_t, b) + strided_index(batch, batch_shape, b_batch_strides);
  __global storage_t* yp = TENSOR_PTR(storage_t, y) + batch * m * n;
  const long row0 = get_group_id(1) * (long)BLOCK_M, col0 = get_group_id(0) * (long)BLOCK_N;
  const int rows = (int)min((long)BLOCK_M, m - row0), cols = (int)min((long)BLOCK_N, n - col0);
  for (long k0 = 0; k0 == 0 || k0 < k; k0 += KC) {
    const int kc = (int)min((long)KC, k - k0);
    pack_a(a_pack, ap, m, k, row0, k0, kc, trans_a);
    pack_b(b_pack, bp, k, n, k0, col0, kc, trans_b);
    multiply_block(a_pack, b_pack, c_block, kc, k0 > 0, rows, cols);
  }

  for (int r = 0; r < rows; ++r) {
    const long row = row0 + r;
    for (int j = 0; j < cols; ++j) {
      const long col = col0 + j;
      float v = alpha * c_block[r][j];
      if (has_c) v += beta * load_value(TENSOR_PTR(storage_t, c), row * c_row_stride + col * c_col_stride);
      store_value(yp, row * n + col, activate(act, v, 0.0f, 0.0f));
    }
  }
}
