/* Every op of porta.h, built through the C API in each storage dtype, run on every device under test and
 * on ref with the same random inputs, and compared. The C++ suite (tests/op_cases) checks the kernels
 * closely; these check that each op and parameter reaches them through C intact. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define TRY(call)                             \
  do {                                        \
    const porta_status try_ = (call);         \
    if (try_ != PORTA_OK) return try_;        \
  } while (0)
/* A shape as the (dims, rank) pair the API takes. */
#define SHAPE(...) (const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)

static porta_dtype dtype = PORTA_F32; /* of every input and constant of the case being built */
static int unsupported = 0;           /* cases the device under test declined */
static uint32_t rng = 1;

static float uniform(float lo, float hi) {
  rng = rng * 1664525u + 1013904223u;
  return lo + (hi - lo) * (float)(rng >> 8) / (float)(1u << 24);
}

static size_t numel(const int64_t* shape, size_t rank) {
  size_t n = 1;
  for (size_t i = 0; i < rank; ++i) n *= (size_t)shape[i];
  return n;
}

static porta_status input(porta_graph* g, const char* name, const int64_t* shape, size_t rank, porta_tensor* out) {
  return porta_graph_input(g, name, shape, rank, dtype, NULL, out);
}

/* A constant of uniform values in [lo, hi). */
static porta_status constant(porta_graph* g, const char* name, const int64_t* shape, size_t rank, float lo, float hi,
                             porta_tensor* out) {
  const size_t n = numel(shape, rank);
  float* values = malloc(n * sizeof(float));
  if (values == NULL) return PORTA_OUT_OF_MEMORY;
  for (size_t i = 0; i < n; ++i) values[i] = uniform(lo, hi);
  const porta_status s = porta_graph_constant_f32(g, name, shape, rank, dtype, values, n, out);
  free(values);
  return s;
}

/* ---- the cases: each adds its inputs and constants and marks the output "y" ------------------------- */

static porta_status matmul_broadcast(porta_graph* g) {
  porta_tensor a, b, y;
  TRY(input(g, "a", SHAPE(2, 3, 5, 7), &a));
  TRY(constant(g, "b", SHAPE(7, 4), -1, 1, &b));
  TRY(porta_matmul(g, a, b, 0, 0, NULL, &y));
  return porta_graph_output(g, "y", y);
}

static porta_status matmul_transposed(porta_graph* g) {
  porta_tensor a, b, y;
  TRY(input(g, "a", SHAPE(3, 7, 5), &a));
  TRY(input(g, "b", SHAPE(4, 7), &b));
  TRY(porta_matmul(g, a, b, 1, 1, "mm", &y));
  return porta_graph_output(g, "y", y);
}

static porta_status gemm(porta_graph* g) {
  porta_tensor a, b, c, y;
  TRY(input(g, "a", SHAPE(5, 9), &a));
  TRY(constant(g, "b", SHAPE(6, 9), -1, 1, &b));
  TRY(constant(g, "c", SHAPE(6), -1, 1, &c));
  porta_gemm_params p = porta_gemm_params_default();
  p.trans_b = 1;
  p.alpha = 0.5f;
  p.beta = 2.0f;
  p.activation = PORTA_ACT_RELU;
  TRY(porta_gemm(g, a, b, c, &p, NULL, &y));
  return porta_graph_output(g, "y", y);
}

static porta_status conv2d_grouped(porta_graph* g) {
  porta_tensor x, w, bias, y;
  TRY(input(g, "x", SHAPE(2, 4, 9, 9), &x));
  TRY(constant(g, "w", SHAPE(6, 2, 3, 3), -0.5f, 0.5f, &w));
  TRY(constant(g, "bias", SHAPE(6), -1, 1, &bias));
  porta_conv2d_params p = porta_conv2d_params_default();
  p.stride[0] = p.stride[1] = 2;
  p.pad[0] = 1, p.pad[1] = 0, p.pad[2] = 1, p.pad[3] = 1;
  p.groups = 2;
  p.activation = PORTA_ACT_SILU;
  TRY(porta_conv2d(g, x, w, bias, PORTA_NO_TENSOR, &p, NULL, &y));
  return porta_graph_output(g, "y", y);
}

static porta_status conv2d_nhwc_residual(porta_graph* g) {
  porta_tensor x, w, r, y;
  TRY(input(g, "x", SHAPE(1, 8, 8, 3), &x));
  TRY(constant(g, "w", SHAPE(4, 3, 3, 3), -0.5f, 0.5f, &w));
  TRY(input(g, "r", SHAPE(1, 8, 8, 4), &r));
  porta_conv2d_params p = porta_conv2d_params_default();
  p.dilation[0] = p.dilation[1] = 2;
  p.pad[0] = p.pad[1] = p.pad[2] = p.pad[3] = 2;
  p.activation = PORTA_ACT_RELU6;
  p.layout = PORTA_NHWC;
  TRY(porta_conv2d(g, x, w, PORTA_NO_TENSOR, r, &p, NULL, &y));
  return porta_graph_output(g, "y", y);
}

typedef porta_status (*binary_fn)(porta_graph*, porta_tensor, porta_tensor, const char*, porta_tensor*);

static porta_status binary(porta_graph* g, binary_fn fn) {
  porta_tensor a, b, y;
  TRY(input(g, "a", SHAPE(2, 3, 4), &a));
  TRY(constant(g, "b", SHAPE(3, 1), 0.5f, 1.5f, &b)); /* away from 0, for div */
  TRY(fn(g, a, b, NULL, &y));
  return porta_graph_output(g, "y", y);
}
static porta_status add(porta_graph* g) { return binary(g, porta_add); }
static porta_status sub(porta_graph* g) { return binary(g, porta_sub); }
static porta_status mul(porta_graph* g) { return binary(g, porta_mul); }
static porta_status div_(porta_graph* g) { return binary(g, porta_div); }

typedef porta_status (*unary_fn)(porta_graph*, porta_tensor, const char*, porta_tensor*);

static porta_status unary(porta_graph* g, unary_fn fn) {
  porta_tensor x, y;
  TRY(input(g, "x", SHAPE(3, 5, 7), &x));
  TRY(fn(g, x, NULL, &y));
  return porta_graph_output(g, "y", y);
}
static porta_status relu(porta_graph* g) { return unary(g, porta_relu); }
static porta_status relu6(porta_graph* g) { return unary(g, porta_relu6); }
static porta_status sigmoid(porta_graph* g) { return unary(g, porta_sigmoid); }
static porta_status silu(porta_graph* g) { return unary(g, porta_silu); }
static porta_status tanh_(porta_graph* g) { return unary(g, porta_tanh); }

static porta_status clip(porta_graph* g) {
  porta_tensor x, y;
  TRY(input(g, "x", SHAPE(4, 9), &x));
  TRY(porta_clip(g, x, -0.3f, 0.4f, NULL, &y));
  return porta_graph_output(g, "y", y);
}

static porta_status gelu(porta_graph* g) {
  porta_tensor x, exact, approx;
  TRY(input(g, "x", SHAPE(4, 9), &x));
  TRY(porta_gelu(g, x, 0, NULL, &exact));
  TRY(porta_gelu(g, x, 1, NULL, &approx));
  TRY(porta_graph_output(g, "y", exact));
  return porta_graph_output(g, "y_tanh", approx);
}

/* Each in its domain: sqrt of x^2, and 1 / (|x| + [0.5, 1.5)). */
static porta_status math(porta_graph* g) {
  porta_tensor x, two, offset, y, square, root, shifted, inverse;
  TRY(input(g, "x", SHAPE(4, 9), &x));
  TRY(constant(g, "two", SHAPE(1), 2, 2, &two));
  TRY(constant(g, "offset", SHAPE(9), 0.5f, 1.5f, &offset));
  TRY(porta_erf(g, x, NULL, &y));
  TRY(porta_graph_output(g, "erf", y));
  TRY(porta_hard_sigmoid(g, x, 0.3f, 0.4f, NULL, &y));
  TRY(porta_graph_output(g, "hard_sigmoid", y));
  TRY(porta_hard_swish(g, x, NULL, &y));
  TRY(porta_graph_output(g, "hard_swish", y));
  TRY(porta_pow(g, x, two, NULL, &square));
  TRY(porta_sqrt(g, square, NULL, &root));
  TRY(porta_add(g, root, offset, NULL, &shifted));
  TRY(porta_reciprocal(g, shifted, NULL, &inverse));
  TRY(porta_graph_output(g, "pow", square));
  TRY(porta_graph_output(g, "sqrt", root));
  return porta_graph_output(g, "reciprocal", inverse);
}

static porta_status batchnorm(porta_graph* g) {
  porta_tensor x, scale, bias, mean, var, y;
  TRY(input(g, "x", SHAPE(2, 3, 4, 5), &x));
  TRY(constant(g, "scale", SHAPE(3), 0.5f, 2, &scale));
  TRY(constant(g, "bias", SHAPE(3), -1, 1, &bias));
  TRY(constant(g, "mean", SHAPE(3), -1, 1, &mean));
  TRY(constant(g, "var", SHAPE(3), 0.5f, 2, &var));
  TRY(porta_batchnorm(g, x, scale, bias, mean, var, 1e-3f, NULL, &y));
  return porta_graph_output(g, "y", y);
}

static porta_status max_pool_ceil(porta_graph* g) {
  porta_tensor x, y;
  TRY(input(g, "x", SHAPE(1, 3, 10, 10), &x));
  porta_pool2d_params p = porta_pool2d_params_default();
  p.kernel[0] = p.kernel[1] = 3;
  p.stride[0] = p.stride[1] = 2;
  p.pad[0] = p.pad[1] = p.pad[2] = p.pad[3] = 1;
  p.ceil_mode = 1;
  TRY(porta_max_pool2d(g, x, &p, NULL, &y));
  return porta_graph_output(g, "y", y);
}

static porta_status avg_pool_padded(porta_graph* g) {
  porta_tensor x, y;
  TRY(input(g, "x", SHAPE(2, 3, 7, 8), &x));
  porta_pool2d_params p = porta_pool2d_params_default();
  p.kernel[0] = 2, p.kernel[1] = 3;
  p.stride[0] = p.stride[1] = 2;
  p.pad[0] = p.pad[1] = 1;
  p.count_include_pad = 1;
  TRY(porta_avg_pool2d(g, x, &p, NULL, &y));
  return porta_graph_output(g, "y", y);
}

static porta_status avg_pool_nhwc(porta_graph* g) {
  porta_tensor x, y;
  TRY(input(g, "x", SHAPE(2, 6, 6, 5), &x));
  porta_pool2d_params p = porta_pool2d_params_default();
  p.kernel[0] = p.kernel[1] = 3;
  p.layout = PORTA_NHWC;
  TRY(porta_avg_pool2d(g, x, &p, NULL, &y));
  return porta_graph_output(g, "y", y);
}

static porta_status global_avg_pool(porta_graph* g, porta_layout layout) {
  porta_tensor x, y;
  TRY(input(g, "x", SHAPE(2, 3, 5, 5), &x));
  TRY(porta_global_avg_pool(g, x, layout, NULL, &y));
  return porta_graph_output(g, "y", y);
}
static porta_status global_avg_pool_nchw(porta_graph* g) { return global_avg_pool(g, PORTA_NCHW); }
static porta_status global_avg_pool_nhwc(porta_graph* g) { return global_avg_pool(g, PORTA_NHWC); }

static porta_status softmax(porta_graph* g) {
  porta_tensor x, y;
  TRY(input(g, "x", SHAPE(3, 10, 4), &x));
  TRY(porta_softmax(g, x, 1, NULL, &y));
  return porta_graph_output(g, "y", y);
}

static porta_status attention(porta_graph* g) {
  porta_tensor q, k, v, mask, y;
  TRY(input(g, "q", SHAPE(2, 3, 5, 4), &q));
  TRY(input(g, "k", SHAPE(2, 3, 7, 4), &k));
  TRY(input(g, "v", SHAPE(2, 3, 7, 6), &v));
  TRY(constant(g, "mask", SHAPE(2, 1, 1, 7), -1, 1, &mask));
  TRY(porta_attention(g, q, k, v, mask, 0.0f, 0, NULL, &y));
  TRY(porta_graph_output(g, "masked", y));
  TRY(porta_attention(g, q, k, v, PORTA_NO_TENSOR, 0.3f, 1, NULL, &y));
  return porta_graph_output(g, "causal", y);
}

static porta_status norms(porta_graph* g) {
  porta_tensor x, scale, bias, y;
  TRY(input(g, "x", SHAPE(3, 5, 8), &x));
  TRY(constant(g, "scale", SHAPE(5, 8), 0.5f, 1.5f, &scale));
  TRY(constant(g, "bias", SHAPE(5, 8), -1, 1, &bias));
  TRY(porta_layer_norm(g, x, scale, bias, -2, 1e-5f, NULL, &y));
  TRY(porta_graph_output(g, "layer_norm", y));
  TRY(porta_rms_norm(g, x, scale, 1, 1e-3f, NULL, &y));
  return porta_graph_output(g, "rms_norm", y);
}

/* Every reduction: over two axes kept as 1s, over a negative axis dropped, and over every axis. */
static porta_status reduce(porta_graph* g) {
  static const char* names[4][3] = {{"sum_kept", "sum_dropped", "sum_all"}, {"mean_kept", "mean_dropped", "mean_all"},
                                    {"max_kept", "max_dropped", "max_all"}, {"min_kept", "min_dropped", "min_all"}};
  const int64_t pair[] = {0, 2}, last[] = {-1};
  porta_tensor x, y;
  TRY(input(g, "x", SHAPE(3, 5, 7), &x));
  for (int op = PORTA_REDUCE_SUM; op <= PORTA_REDUCE_MIN; ++op) {
    TRY(porta_reduce(g, x, (porta_reduction)op, pair, 2, 1, NULL, &y));
    TRY(porta_graph_output(g, names[op][0], y));
    TRY(porta_reduce(g, x, (porta_reduction)op, last, 1, 0, NULL, &y));
    TRY(porta_graph_output(g, names[op][1], y));
    TRY(porta_reduce(g, x, (porta_reduction)op, NULL, 0, 1, NULL, &y));
    TRY(porta_graph_output(g, names[op][2], y));
  }
  return PORTA_OK;
}

static porta_status shape_ops(porta_graph* g) {
  porta_tensor x, r, f, t;
  TRY(input(g, "x", SHAPE(2, 3, 4, 5), &x));
  TRY(porta_reshape(g, x, SHAPE(0, -1, 5), NULL, &r));
  TRY(porta_flatten(g, x, 2, NULL, &f));
  TRY(porta_transpose(g, x, SHAPE(2, 0, 3, 1), NULL, &t));
  TRY(porta_graph_output(g, "reshaped", r));
  TRY(porta_graph_output(g, "flat", f));
  return porta_graph_output(g, "transposed", t);
}

static porta_status concat(porta_graph* g) {
  porta_tensor xs[3], y;
  TRY(input(g, "a", SHAPE(2, 1, 3), &xs[0]));
  TRY(input(g, "b", SHAPE(2, 2, 3), &xs[1]));
  TRY(constant(g, "c", SHAPE(2, 3, 3), -1, 1, &xs[2]));
  TRY(porta_concat(g, xs, 3, -2, NULL, &y));
  return porta_graph_output(g, "y", y);
}

static porta_status cast(porta_graph* g) {
  porta_tensor x, h, b, f;
  TRY(input(g, "x", SHAPE(3, 7), &x));
  TRY(porta_cast(g, x, PORTA_F16, NULL, &h));
  TRY(porta_cast(g, x, PORTA_BF16, NULL, &b));
  TRY(porta_cast(g, x, PORTA_F32, NULL, &f));
  TRY(porta_graph_output(g, "f16", h));
  TRY(porta_graph_output(g, "bf16", b));
  return porta_graph_output(g, "f32", f);
}

static porta_status slice_split_pad_expand(porta_graph* g) {
  porta_tensor x, s, pieces[2], p, e;
  const int64_t starts[] = {-1, 1}, ends[] = {-100, 100}, axes[] = {1, 2}, steps[] = {-2, 2}, sizes[] = {1, 3};
  TRY(input(g, "x", SHAPE(2, 4, 5), &x));
  TRY(porta_slice(g, x, starts, ends, axes, steps, 2, NULL, &s));
  TRY(porta_split(g, x, 1, sizes, 2, "split", pieces));
  TRY(porta_pad(g, pieces[1], SHAPE(0, 1, 2, 1, 0, 2), PORTA_PAD_REFLECT, 0.0f, NULL, &p));
  TRY(porta_expand(g, pieces[0], SHAPE(3, 2, 1, 1), NULL, &e));
  TRY(porta_graph_output(g, "sliced", s));
  TRY(porta_graph_output(g, "padded", p));
  return porta_graph_output(g, "expanded", e);
}

/* Indices made from an input ([-3, 3) truncated to [-2, 2]), a gather, a comparison, not/or and where. */
static porta_status index_ops(porta_graph* g) {
  porta_tensor x, ids_f, ids, rows, c, less, not_less, either, y;
  TRY(input(g, "x", SHAPE(5, 3), &x));
  TRY(input(g, "ids", SHAPE(4), &ids_f));
  TRY(constant(g, "c", SHAPE(3), -1, 1, &c));
  TRY(porta_cast(g, ids_f, PORTA_I64, NULL, &ids));
  TRY(porta_gather(g, x, ids, 0, "gather", &rows));
  TRY(porta_compare(g, rows, c, PORTA_LESS, NULL, &less));
  TRY(porta_logical(g, PORTA_NOT, less, PORTA_NO_TENSOR, NULL, &not_less));
  TRY(porta_logical(g, PORTA_OR, less, not_less, NULL, &either));
  TRY(porta_where(g, less, rows, c, NULL, &y));
  TRY(porta_graph_output(g, "either", either));
  return porta_graph_output(g, "y", y);
}

typedef struct op_case {
  const char* name;
  porta_status (*build)(porta_graph*);
} op_case;

static const op_case cases[] = {
    {"matmul_broadcast", matmul_broadcast}, {"matmul_transposed", matmul_transposed}, {"gemm", gemm},
    {"conv2d_grouped", conv2d_grouped}, {"conv2d_nhwc_residual", conv2d_nhwc_residual}, {"add", add},
    {"sub", sub}, {"mul", mul}, {"div", div_}, {"relu", relu}, {"relu6", relu6}, {"clip", clip},
    {"sigmoid", sigmoid}, {"silu", silu}, {"tanh", tanh_}, {"gelu", gelu}, {"math", math}, {"batchnorm", batchnorm},
    {"max_pool2d", max_pool_ceil}, {"avg_pool2d", avg_pool_padded}, {"avg_pool2d_nhwc", avg_pool_nhwc},
    {"global_avg_pool", global_avg_pool_nchw}, {"global_avg_pool_nhwc", global_avg_pool_nhwc},
    {"softmax", softmax}, {"reduce", reduce}, {"norms", norms}, {"reshape_flatten_transpose", shape_ops},
    {"concat", concat}, {"cast", cast}, {"slice_split_pad_expand", slice_split_pad_expand},
    {"index_ops", index_ops},
    {"attention", attention},
};

/* ---- running a case on a device and on ref -------------------------------------------------------- */

/* The output `name` of `exe` as floats (malloc'd), and its element count. */
static float* output_of(const porta_executable* exe, const char* name, size_t* count) {
  porta_tensor_desc d;
  if (porta_executable_output_desc(exe, name, &d) != PORTA_OK) return NULL;
  *count = numel(d.shape, d.rank);
  float* values = malloc(*count * sizeof(float) + 1);
  if (values != NULL && porta_get_output_f32(exe, name, values, *count) != PORTA_OK) {
    free(values);
    return NULL;
  }
  return values;
}

/* The largest difference between two executables' output `name`, relative to the larger of 1 and
 * ref's largest magnitude; -1 when an output could not be read. */
static double difference(const porta_executable* exe, const porta_executable* ref, const char* name) {
  size_t n = 0, n_ref = 0;
  float* got = output_of(exe, name, &n);
  float* want = output_of(ref, name, &n_ref);
  double worst = got != NULL && want != NULL && n == n_ref ? 0 : -1, scale = 1;
  for (size_t i = 0; worst >= 0 && i < n; ++i) scale = fmax(scale, fabs(want[i]));
  for (size_t i = 0; worst >= 0 && i < n; ++i) worst = fmax(worst, fabs((double)got[i] - want[i]) / scale);
  for (size_t i = 0; worst >= 0 && i < n; ++i)
    if (isnan(got[i]) != isnan(want[i])) worst = INFINITY;
  free(got);
  free(want);
  return worst;
}

/* Random values for every input of `graph`, set on both executables. */
static porta_status set_inputs(const porta_graph* graph, porta_executable* exe, porta_executable* ref) {
  size_t inputs = 0;
  TRY(porta_graph_input_count(graph, &inputs));
  for (size_t i = 0; i < inputs; ++i) {
    const char* name;
    porta_tensor t;
    porta_tensor_desc d;
    TRY(porta_graph_input_at(graph, i, &name, &t));
    TRY(porta_graph_tensor_desc(graph, t, &d));
    const size_t n = numel(d.shape, d.rank);
    float* values = malloc(n * sizeof(float) + 1);
    if (values == NULL) return PORTA_OUT_OF_MEMORY;
    for (size_t k = 0; k < n; ++k) values[k] = uniform(-3, 3);
    porta_status s = porta_set_input_f32(exe, name, values, n);
    if (s == PORTA_OK) s = porta_set_input_f32(ref, name, values, n);
    free(values);
    TRY(s);
  }
  return PORTA_OK;
}

/* Builds, compiles on both devices, runs and compares every output within `tolerance`. */
static void run_case(const op_case* c, porta_device* device, porta_device* ref, double tolerance, const char* spec) {
  porta_graph* graph = NULL;
  porta_executable *exe = NULL, *ref_exe = NULL;
  porta_compile_options options = porta_compile_options_default();
  options.poison_memory = 1; /* an output left unwritten reads NaN, and fails */
  CHECK_OK(porta_graph_create(&graph));
  CHECK_OK(c->build(graph));
  /* A device may decline a form of an op (OpenCL runs NCHW only): it says so, and the case is not run. */
  const porta_status compiled = porta_compile(device, graph, &options, &exe);
  if (compiled == PORTA_UNSUPPORTED) {
    printf("  %s on %s: %s\n", c->name, spec, porta_last_error());
    ++unsupported;
  } else {
    CHECK_OK(compiled);
  }
  CHECK_OK(porta_compile(ref, graph, &options, &ref_exe));
  if (exe != NULL && ref_exe != NULL) {
    CHECK_OK(set_inputs(graph, exe, ref_exe));
    CHECK_OK(porta_run(exe));
    CHECK_OK(porta_run(ref_exe));
    size_t outputs = 0;
    CHECK_OK(porta_graph_output_count(graph, &outputs));
    for (size_t i = 0; i < outputs; ++i) {
      const char* name = NULL;
      CHECK_OK(porta_graph_output_at(graph, i, &name, NULL));
      const double diff = difference(exe, ref_exe, name);
      CHECK(diff >= 0 && diff <= tolerance);
      if (!(diff >= 0 && diff <= tolerance))
        fprintf(stderr, "  %s output %s on %s in %s: difference %g, tolerance %g\n", c->name, name, spec,
                dtype == PORTA_F32 ? "f32" : dtype == PORTA_F16 ? "f16" : "bf16", diff, tolerance);
    }
  }
  porta_executable_free(exe);
  porta_executable_free(ref_exe);
  porta_graph_free(graph);
}

/* ---- the devices under test -------------------------------------------------------------------------- */

static int devices_required(void) {
  const char* v = getenv("PORTA_REQUIRE_DEVICES");
  return v != NULL && strcmp(v, "1") == 0;
}

/* Every case in every dtype on `spec`; 1 when the device was there to test. */
static int test_device(const char* spec, porta_device* ref) {
  static const porta_dtype dtypes[] = {PORTA_F32, PORTA_F16, PORTA_BF16};
  static const double tolerances[] = {1e-4, 4e-3, 3e-2}; /* a few units in the last place of each */
  porta_device* device = NULL;
  const porta_status s = porta_device_open(spec, &device);
  if (s == PORTA_NOT_FOUND || s == PORTA_DEVICE_UNAVAILABLE) {
    printf("skipping device '%s': %s\n", spec, porta_last_error());
    CHECK(!devices_required());
    return 0;
  }
  CHECK_OK(s);
  if (device == NULL) return 0;
  for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; ++d) {
    dtype = dtypes[d];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) run_case(&cases[i], device, ref, tolerances[d], spec);
  }
  dtype = PORTA_F32;
  printf("%s: %zu op cases in f32, f16 and bf16 against ref, %d of them unsupported there\n", spec,
         3 * sizeof cases / sizeof *cases, unsupported);
  unsupported = 0;
  porta_device_free(device);
  return 1;
}

/* PORTA_TEST_DEVICES (specs separated by ',' or ';'), else every device of this build; returns how many
 * were tested. */
int run_op_cases(void) {
  porta_device* ref = NULL;
  CHECK_OK(porta_device_open("ref", &ref));
  if (ref == NULL) return 0;
  int tested = 0;
  const char* env = getenv("PORTA_TEST_DEVICES");
  if (env != NULL && *env != '\0') {
    char specs[1024];
    snprintf(specs, sizeof specs, "%s", env);
    for (char* spec = strtok(specs, ",;"); spec != NULL; spec = strtok(NULL, ",;")) tested += test_device(spec, ref);
  } else {
    size_t count = 0;
    CHECK_OK(porta_devices(NULL, 0, &count));
    porta_device_info* infos = calloc(count + 1, sizeof *infos);
    CHECK_OK(porta_devices(infos, count, &count));
    for (size_t i = 0; infos != NULL && i < count; ++i) tested += test_device(infos[i].spec, ref);
    free(infos);
  }
  porta_device_free(ref);
  return tested;
}
