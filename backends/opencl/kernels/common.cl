// Prepended to every porta OpenCL program. The build option STORAGE_F32, STORAGE_F16, STORAGE_BF16,
// STORAGE_I64, STORAGE_I32 or STORAGE_BOOL picks the storage dtype of the program's tensors;
// arithmetic is always float. f16 goes through vload_half/vstore_half, which are core OpenCL 1.2:
// no cl_khr_fp16 needed. Integer and bool storage serves the ops that move, index, compare and cast.

// A tensor argument is the arena (or constant) buffer and the tensor's byte offset in it: plan
// offsets need no sub-buffer alignment that way.
#define TENSOR(name) __global uchar* name##_base, ulong name##_offset
#define TENSOR_PTR(type, name) ((__global type*)(name##_base + name##_offset))

float load_f32(__global const float* p, long i) { return p[i]; }
float load_f16(__global const half* p, long i) { return vload_half((size_t)i, p); }
float load_bf16(__global const ushort* p, long i) { return as_float((uint)p[i] << 16); }

void store_f32(__global float* p, long i, float v) { p[i] = v; }
void store_f16(__global half* p, long i, float v) { vstore_half_rte(v, (size_t)i, p); }
// Round to nearest even, NaN stays a quiet NaN: the same bits as porta::f32_to_bf16.
void store_bf16(__global ushort* p, long i, float v) {
  const uint x = as_uint(v);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    p[i] = (ushort)((x >> 16) | 0x40u);
    return;
  }
  p[i] = (ushort)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// Integers load as the nearest float and store truncated toward zero as porta::store_from_f32 does:
// NaN gives 0, i64 saturates, i32 keeps the low 32 bits of that i64 (it wraps); a bool is 0 or 1,
// and any value but 0 stores as 1.
float load_i64(__global const long* p, long i) { return (float)p[i]; }
float load_i32(__global const int* p, long i) { return (float)p[i]; }
float load_bool(__global const uchar* p, long i) { return p[i] != 0 ? 1.0f : 0.0f; }
void store_i64(__global long* p, long i, float v) { p[i] = convert_long_sat_rtz(v); }
void store_i32(__global int* p, long i, float v) { p[i] = (int)convert_long_sat_rtz(v); }
void store_bool(__global uchar* p, long i, float v) { p[i] = v != 0.0f ? 1 : 0; }

#if defined(STORAGE_F32)
typedef float storage_t;
typedef uint raw_t;  // the element as bits, for ops that only move values
#define load_value load_f32
#define store_value store_f32
#elif defined(STORAGE_F16)
typedef half storage_t;
typedef ushort raw_t;
#define load_value load_f16
#define store_value store_f16
#elif defined(STORAGE_BF16)
typedef ushort storage_t;
typedef ushort raw_t;
#define load_value load_bf16
#define store_value store_bf16
#elif defined(STORAGE_I64)
typedef long storage_t;
typedef ulong raw_t;
#define load_value load_i64
#define store_value store_i64
#define INTEGER_STORAGE
#elif defined(STORAGE_I32)
typedef int storage_t;
typedef uint raw_t;
#define load_value load_i32
#define store_value store_i32
#define INTEGER_STORAGE
#elif defined(STORAGE_BOOL)
typedef uchar storage_t;
typedef uchar raw_t;
#define load_value load_bool
#define store_value store_bool
#define INTEGER_STORAGE
#else
#error "build with -DSTORAGE_F32, -DSTORAGE_F16, -DSTORAGE_BF16, -DSTORAGE_I64, -DSTORAGE_I32 or -DSTORAGE_BOOL"
#endif

// Activation codes: porta::Activation's values, then those that only unary ops use
// (kept in step with backends/opencl/ops/ops.hpp).
#define ACT_NONE 0
#define ACT_RELU 1
#define ACT_RELU6 2
#define ACT_SIGMOID 3
#define ACT_SILU 4
#define ACT_TANH 5
#define ACT_GELU 6
#define ACT_GELU_TANH 7
#define ACT_CLIP 8
#define ACT_ERF 9
#define ACT_SQRT 10
#define ACT_RECIPROCAL 11
#define ACT_HARD_SIGMOID 12  // alpha and beta in lo and hi
#define ACT_HARD_SWISH 13

float clip_value(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }
float sigmoid_value(float x) { return 1.0f / (1.0f + exp(-x)); }

float activate(int act, float x, float lo, float hi) {
  switch (act) {
    case ACT_RELU: return x > 0.0f ? x : 0.0f;
    case ACT_RELU6: return clip_value(x, 0.0f, 6.0f);
    case ACT_SIGMOID: return sigmoid_value(x);
    case ACT_SILU: return x * sigmoid_value(x);
    case ACT_TANH: return tanh(x);
    case ACT_GELU: return 0.5f * x * (1.0f + erf(x * M_SQRT1_2_F));
    case ACT_GELU_TANH: {
      // 0.5 x (1 + tanh(z)) as x sigmoid(2z): where tanh(z) is near -1, PoCL's is an ulp above it even at
      // -inf, and 1 + tanh(z) left 2^-25 x (-1e31 at -FLT_MAX) where GELU is 0.
      const float c = 0.7978845608028654f;  // sqrt(2 / pi)
      return x * sigmoid_value(2.0f * c * (x + 0.044715f * x * x * x));
    }
    case ACT_CLIP: return clip_value(x, lo, hi);
    case ACT_ERF: return erf(x);
    case ACT_SQRT: return sqrt(x);
    case ACT_RECIPROCAL: return 1.0f / x;
    case ACT_HARD_SIGMOID: return clip_value(lo * x + hi, 0.0f, 1.0f);
    case ACT_HARD_SWISH: return x * clip_value(x * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f);
    default: return x;
  }
}

// Offset of element `index` of a row-major result of `shape` in an operand with `strides`
// (0 along broadcast dimensions). Shapes are padded to 8 dimensions with leading 1s.
long strided_index(long index, long8 shape, long8 strides) {
  long dims[8], steps[8];
  vstore8(shape, 0, dims);
  vstore8(strides, 0, steps);
  long offset = 0;
  for (int d = 7; d >= 0; --d) {
    offset += (index % dims[d]) * steps[d];
    index /= dims[d];
  }
  return offset;
}

// VW consecutive elements starting at element i, as a float vector (VW is a build option of the
// programs that use it: 4, 8 or 16).
#ifdef VW
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define floatv CAT(float, VW)
#define uintv CAT(uint, VW)
#define ushortv CAT(ushort, VW)
#if defined(STORAGE_F32)
floatv load_vector(__global const float* p, long i) { return CAT(vload, VW)(0, p + i); }
#elif defined(STORAGE_F16)
floatv load_vector(__global const half* p, long i) { return CAT(vload_half, VW)(0, p + i); }
#else
floatv load_vector(__global const ushort* p, long i) {
  return CAT(as_float, VW)(CAT(convert_uint, VW)(CAT(vload, VW)(0, p + i)) << 16);
}
#endif
#endif
