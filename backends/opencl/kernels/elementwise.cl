// Elementwise ops: binary arithmetic with numpy broadcasting, activations, and cast.

#define BINARY_ADD 0
#define BINARY_SUB 1
#define BINARY_MUL 2
#define BINARY_DIV 3
#define BINARY_POW 4

// How an operand is read: laid out as the result, a single value, or through its strides.
#define OPERAND_DENSE 0
#define OPERAND_SINGLE 1
#define OPERAND_STRIDED 2

long operand_index(int mode, long i, long8 shape, long8 strides) {
  return mode == OPERAND_DENSE ? i : mode == OPERAND_SINGLE ? 0 : strided_index(i, shape, strides);
}

// Only OPERAND_STRIDED pays for the index math, which is most of the time of a broadcast.
__kernel void binary(TENSOR(a), TENSOR(b), TENSOR(y), long n, int op, int a_mode, int b_mode, long8 shape,
                     long8 a_strides, long8 b_strides) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const long ai = operand_index(a_mode, i, shape, a_strides);
  const long bi = operand_index(b_mode, i, shape, b_strides);
  const float av = load_value(TENSOR_PTR(storage_t, a), ai);
  const float bv = load_value(TENSOR_PTR(storage_t, b), bi);
  float v;
  switch (op) {
    case BINARY_ADD: v = av + bv; break;
    case BINARY_SUB: v = av - bv; break;
    case BINARY_MUL: v = av * bv; break;
    case BINARY_DIV: v = av / bv; break;
    default: v = pow(av, bv); break;
  }
  store_value(TENSOR_PTR(storage_t, y), i, v);
}

__kernel void unary(TENSOR(x), TENSOR(y), long n, int act, float lo, float hi) {
  const long i = get_global_id(0);
  if (i >= n) return;
  store_value(TENSOR_PTR(storage_t, y), i, activate(act, load_value(TENSOR_PTR(storage_t, x), i), lo, hi));
}

// The output has the program's storage dtype; one kernel per input dtype.
#define CAST_FROM(dtype, type)                                                     \
  __kernel void cast_from_##dtype(TENSOR(x), TENSOR(y), long n) {                  \
    const long i = get_global_id(0);                                               \
    if (i >= n) return;                                                            \
    store_value(TENSOR_PTR(storage_t, y), i, load_##dtype(TENSOR_PTR(type, x), i)); \
  }
CAST_FROM(f32, float)
CAST_FROM(f16, half)
CAST_FROM(bf16, ushort)
CAST_FROM(i64, long)
CAST_FROM(i32, int)
CAST_FROM(bool, uchar)

#ifdef INTEGER_STORAGE
// Between integer dtypes: through long, exact where a float would round (i32 wraps, bool is != 0).
#define CAST_EXACT_FROM(dtype, type)                                        \
  __kernel void cast_exact_from_##dtype(TENSOR(x), TENSOR(y), long n) {     \
    const long i = get_global_id(0);                                        \
    if (i >= n) return;                                                     \
    const long v = TENSOR_PTR(type, x)[i];                                  \
    TENSOR_PTR(storage_t, y)[i] = (storage_t)(sizeof(storage_t) == 1 ? v != 0 : v); \
  }
CAST_EXACT_FROM(i64, long)
CAST_EXACT_FROM(i32, int)
CAST_EXACT_FROM(bool, uchar)
#endif
