// Gather, comparisons, logical ops and where. Operands broadcast through strided_index (strides 0
// along broadcast dimensions); elements that are only moved are copied as bits (raw_t).

// Gather: y[o][j][k] = data[o][indices[j]][k] over `inner` elements k. The host has checked the
// indices (i64, or i32 where `wide` is 0) against `extent` and wraps none: negative ones wrap here.
__kernel void gather(TENSOR(data), TENSOR(indices), TENSOR(y), long n, long count, long extent, long inner,
                     int wide) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const long k = i % inner, j = i / inner % count, outer = i / inner / count;
  long at = wide ? TENSOR_PTR(long, indices)[j] : (long)TENSOR_PTR(int, indices)[j];
  if (at < 0) at += extent;
  TENSOR_PTR(raw_t, y)[i] = TENSOR_PTR(raw_t, data)[(outer * extent + at) * inner + k];
}

// Comparisons, numbered as porta::Comparison: operands in the program's storage dtype (integers
// compared exactly, as long), a bool result.
#ifdef INTEGER_STORAGE
typedef long compared_t;
#define load_compared(name, i) ((long)TENSOR_PTR(storage_t, name)[i])
#else
typedef float compared_t;
#define load_compared(name, i) load_value(TENSOR_PTR(storage_t, name), i)
#endif

__kernel void compare(TENSOR(a), TENSOR(b), TENSOR(y), long n, int op, long8 shape, long8 a_strides,
                      long8 b_strides) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const compared_t x = load_compared(a, strided_index(i, shape, a_strides));
  const compared_t z = load_compared(b, strided_index(i, shape, b_strides));
  const int holds = op == 0 ? x == z : op == 1 ? x < z : op == 2 ? x <= z : op == 3 ? x > z : x >= z;
  TENSOR_PTR(uchar, y)[i] = holds ? 1 : 0;
}

// Not (0, b unused), and (1), or (2) of bool tensors, numbered as porta::LogicalOp.
__kernel void logical(TENSOR(a), TENSOR(b), TENSOR(y), long n, int op, long8 shape, long8 a_strides,
                      long8 b_strides) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const int x = TENSOR_PTR(uchar, a)[strided_index(i, shape, a_strides)] != 0;
  const int z = TENSOR_PTR(uchar, b)[strided_index(i, shape, b_strides)] != 0;
  TENSOR_PTR(uchar, y)[i] = (op == 0 ? !x : op == 1 ? x && z : x || z) ? 1 : 0;
}

// out = cond ? x : y, elements of the program's storage dtype.
__kernel void where_select(TENSOR(cond), TENSOR(x), TENSOR(y), TENSOR(out), long n, long8 shape,
                           long8 cond_strides, long8 x_strides, long8 y_strides) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const int take_x = TENSOR_PTR(uchar, cond)[strided_index(i, shape, cond_strides)] != 0;
  TENSOR_PTR(raw_t, out)[i] = take_x ? TENSOR_PTR(raw_t, x)[strided_index(i, shape, x_strides)]
                                     : TENSOR_PTR(raw_t, y)[strided_index(i, shape, y_strides)];
}
