/* porta's C API (C11): build an op graph, compile it for a device, run it; from C or any language
 * with a C FFI. It wraps the C++ API of porta.hpp one to one and lives in libporta.
 *
 * Every function that can fail returns a porta_status: PORTA_OK (0) or a code equal to
 * porta::ErrorCode. porta_last_error() then gives the message of this thread's last failure. No C++
 * exception crosses this boundary, and a NULL or freed handle, a NULL pointer where one is needed or a
 * buffer of the wrong size is an error, never a crash (a handle used after free is caught while its
 * memory has not been reused, and always under AddressSanitizer).
 *
 * Handles are opaque and owned by the caller: each porta_*_create/open/compile/load/build is paired
 * with its porta_*_free (which takes NULL). A graph is used by one thread at a time; an executable's
 * runs may come from several threads (they are serialized). Sizes are in bytes unless named count. */
#ifndef PORTA_PORTA_H
#define PORTA_PORTA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status and errors ------------------------------------------------------------------------- */

typedef enum porta_status {
  PORTA_OK = 0,
  PORTA_INVALID_ARGUMENT = 1, /* a value the caller passed is out of range or malformed */
  PORTA_SHAPE_MISMATCH = 2,
  PORTA_DTYPE_MISMATCH = 3,
  PORTA_OVERFLOW = 4,
  PORTA_NOT_FOUND = 5,        /* a named tensor, device, backend or model does not exist */
  PORTA_UNSUPPORTED = 6,      /* valid, but not implemented on this device */
  PORTA_DEVICE_UNAVAILABLE = 7,
  PORTA_OUT_OF_MEMORY = 8,
  PORTA_BUILD_FAILED = 9,
  PORTA_IO_ERROR = 10,
  PORTA_INTERNAL = 11         /* a bug in porta: please report it */
} porta_status;

/* The message of the last call on this thread that failed ("" if none); valid until the next failure
 * on this thread. */
const char* porta_last_error(void);
/* "ok", "invalid argument", ...; "unknown status" for a value outside the enum. */
const char* porta_status_string(porta_status status);

/* ---- enums (values equal to porta::DType, Activation, Layout, Impl, RunClock) --------------------- */

/* i64, i32 and bool (one byte, 0 or 1) hold indices and masks: only the ops that move, index, compare or
 * select elements take them. */
typedef enum porta_dtype {
  PORTA_F32 = 0, PORTA_F16 = 1, PORTA_BF16 = 2, PORTA_I64 = 3, PORTA_I32 = 4, PORTA_BOOL = 5
} porta_dtype;
typedef enum porta_activation {
  PORTA_ACT_NONE = 0, PORTA_ACT_RELU, PORTA_ACT_RELU6, PORTA_ACT_SIGMOID, PORTA_ACT_SILU, PORTA_ACT_TANH,
  PORTA_ACT_GELU
} porta_activation;

typedef enum porta_reduction {
  PORTA_REDUCE_SUM = 0, PORTA_REDUCE_MEAN, PORTA_REDUCE_MAX, PORTA_REDUCE_MIN
} porta_reduction;
typedef enum porta_layout { PORTA_NCHW = 0, PORTA_NHWC = 1 } porta_layout;
typedef enum porta_impl { PORTA_IMPL_NATIVE = 0, PORTA_IMPL_VENDOR = 1 } porta_impl;
typedef enum porta_run_clock { PORTA_CLOCK_NONE = 0, PORTA_CLOCK_DEVICE = 1, PORTA_CLOCK_HOST = 2 } porta_run_clock;

/* Bytes of one element: 4 for f32 and i32, 2 for f16 and bf16, 8 for i64, 1 for bool (0 for a value
 * outside the enum). */
size_t porta_dtype_size(porta_dtype dtype);

#define PORTA_MAX_RANK 8

typedef struct porta_tensor_desc {
  porta_dtype dtype;
  size_t rank;
  int64_t shape[PORTA_MAX_RANK];
} porta_tensor_desc;

/* ---- graphs ------------------------------------------------------------------------------------ */

typedef struct porta_graph porta_graph;
/* A tensor of one graph; id -1 means "none" (an optional operand left out). */
typedef struct porta_tensor { int32_t id; } porta_tensor;
#ifdef __cplusplus
#define PORTA_NO_TENSOR (porta_tensor{-1})
#else
#define PORTA_NO_TENSOR ((porta_tensor){-1})
#endif

porta_status porta_graph_create(porta_graph** out);
void porta_graph_free(porta_graph* graph);

/* A graph input of `rank` dims. `strides` (elements, may be NULL for dense row-major) lets the
 * caller's buffer be a strided view. */
porta_status porta_graph_input(porta_graph* graph, const char* name, const int64_t* shape, size_t rank,
                               porta_dtype dtype, const int64_t* strides, porta_tensor* out);
/* A constant from `bytes` bytes already in `dtype` storage; `bytes` must be the tensor's size. */
porta_status porta_graph_constant(porta_graph* graph, const char* name, const int64_t* shape, size_t rank,
                                  porta_dtype dtype, const void* data, size_t bytes, porta_tensor* out);
/* A constant from `count` floats, converted to `dtype` once, here. */
porta_status porta_graph_constant_f32(porta_graph* graph, const char* name, const int64_t* shape, size_t rank,
                                      porta_dtype dtype, const float* values, size_t count, porta_tensor* out);
/* Marks `tensor` as an output named `name`. */
porta_status porta_graph_output(porta_graph* graph, const char* name, porta_tensor tensor);

porta_status porta_graph_tensor_desc(const porta_graph* graph, porta_tensor tensor, porta_tensor_desc* out);
porta_status porta_graph_input_count(const porta_graph* graph, size_t* count);
porta_status porta_graph_output_count(const porta_graph* graph, size_t* count);
/* The name (valid while the graph lives and is not changed) and tensor of input or output `index`. */
porta_status porta_graph_input_at(const porta_graph* graph, size_t index, const char** name, porta_tensor* tensor);
porta_status porta_graph_output_at(const porta_graph* graph, size_t index, const char** name, porta_tensor* tensor);

/* ---- ops: each writes its result to *out; `name` may be NULL ("<op>_<index>") ---------------------
 * Structs with a `size` field take sizeof(struct) there, so that one of another size (another
 * header's) is refused: start from porta_*_params_default(), which sets it. A NULL params pointer
 * means the defaults. Before porta's first release a struct may change within its size: rebuild
 * against the header of the library you link (docs/c-api.md). */

porta_status porta_matmul(porta_graph* graph, porta_tensor a, porta_tensor b, int trans_a, int trans_b,
                          const char* name, porta_tensor* out);

typedef struct porta_gemm_params {
  size_t size;
  int trans_a, trans_b;
  float alpha, beta; /* act(alpha op(A) op(B) + beta C) */
  porta_activation activation;
} porta_gemm_params;
porta_gemm_params porta_gemm_params_default(void);
/* A is [M, K] ([K, M] with trans_a), B [K, N] ([N, K]); c, broadcast to [M, N], may be PORTA_NO_TENSOR. */
porta_status porta_gemm(porta_graph* graph, porta_tensor a, porta_tensor b, porta_tensor c,
                        const porta_gemm_params* params, const char* name, porta_tensor* out);

typedef struct porta_conv2d_params {
  size_t size;
  int64_t stride[2];   /* h, w */
  int64_t pad[4];      /* top, left, bottom, right */
  int64_t dilation[2]; /* h, w */
  int64_t groups;
  porta_activation activation;
  porta_layout layout; /* of x, residual and y; weights are [K, C/groups, R, S] */
} porta_conv2d_params;
porta_conv2d_params porta_conv2d_params_default(void);
/* y = activation(conv(x, w) + bias + residual); bias [K] and residual (y's shape) may be PORTA_NO_TENSOR. */
porta_status porta_conv2d(porta_graph* graph, porta_tensor x, porta_tensor w, porta_tensor bias,
                          porta_tensor residual, const porta_conv2d_params* params, const char* name,
                          porta_tensor* out);

/* numpy broadcasting */
porta_status porta_add(porta_graph* graph, porta_tensor a, porta_tensor b, const char* name, porta_tensor* out);
porta_status porta_sub(porta_graph* graph, porta_tensor a, porta_tensor b, const char* name, porta_tensor* out);
porta_status porta_mul(porta_graph* graph, porta_tensor a, porta_tensor b, const char* name, porta_tensor* out);
porta_status porta_div(porta_graph* graph, porta_tensor a, porta_tensor b, const char* name, porta_tensor* out);

porta_status porta_relu(porta_graph* graph, porta_tensor x, const char* name, porta_tensor* out);
porta_status porta_relu6(porta_graph* graph, porta_tensor x, const char* name, porta_tensor* out);
porta_status porta_clip(porta_graph* graph, porta_tensor x, float min, float max, const char* name, porta_tensor* out);
porta_status porta_sigmoid(porta_graph* graph, porta_tensor x, const char* name, porta_tensor* out);
porta_status porta_silu(porta_graph* graph, porta_tensor x, const char* name, porta_tensor* out);
porta_status porta_tanh(porta_graph* graph, porta_tensor x, const char* name, porta_tensor* out);
/* tanh_approximation 0: the exact erf form (ONNX Gelu, torch's default). */
porta_status porta_gelu(porta_graph* graph, porta_tensor x, int tanh_approximation, const char* name,
                        porta_tensor* out);
porta_status porta_erf(porta_graph* graph, porta_tensor x, const char* name, porta_tensor* out);
porta_status porta_sqrt(porta_graph* graph, porta_tensor x, const char* name, porta_tensor* out);
porta_status porta_reciprocal(porta_graph* graph, porta_tensor x, const char* name, porta_tensor* out);
/* max(0, min(1, alpha * x + beta)); ONNX's defaults are alpha 0.2, beta 0.5. */
porta_status porta_hard_sigmoid(porta_graph* graph, porta_tensor x, float alpha, float beta, const char* name,
                                porta_tensor* out);
/* x * hard_sigmoid(x) with alpha 1/6, beta 1/2. */
porta_status porta_hard_swish(porta_graph* graph, porta_tensor x, const char* name, porta_tensor* out);
/* a ^ b, numpy broadcasting */
porta_status porta_pow(porta_graph* graph, porta_tensor a, porta_tensor b, const char* name, porta_tensor* out);

/* Inference: scale * (x - mean) / sqrt(var + epsilon) + bias over dim 1; scale, bias, mean, var [C]. */
porta_status porta_batchnorm(porta_graph* graph, porta_tensor x, porta_tensor scale, porta_tensor bias,
                             porta_tensor mean, porta_tensor var, float epsilon, const char* name, porta_tensor* out);

typedef struct porta_pool2d_params {
  size_t size;
  int64_t kernel[2];
  int64_t stride[2];
  int64_t pad[4]; /* top, left, bottom, right */
  int64_t dilation[2];
  int ceil_mode;
  int count_include_pad; /* average pooling only */
  porta_layout layout;
} porta_pool2d_params;
porta_pool2d_params porta_pool2d_params_default(void); /* kernel, stride and dilation 1, no padding */
porta_status porta_max_pool2d(porta_graph* graph, porta_tensor x, const porta_pool2d_params* params,
                              const char* name, porta_tensor* out);
porta_status porta_avg_pool2d(porta_graph* graph, porta_tensor x, const porta_pool2d_params* params,
                              const char* name, porta_tensor* out);
/* NCHW: [N, C, H, W] -> [N, C, 1, 1]; NHWC: -> [N, 1, 1, C]. */
porta_status porta_global_avg_pool(porta_graph* graph, porta_tensor x, porta_layout layout, const char* name,
                                   porta_tensor* out);

/* ONNX LayerNormalization and RMSNormalization over the axes from `axis` on (negative: from the end);
 * scale and bias have those axes' shape; bias may be PORTA_NO_TENSOR. */
porta_status porta_layer_norm(porta_graph* graph, porta_tensor x, porta_tensor scale, porta_tensor bias, int64_t axis,
                              float epsilon, const char* name, porta_tensor* out);
porta_status porta_rms_norm(porta_graph* graph, porta_tensor x, porta_tensor scale, int64_t axis, float epsilon,
                            const char* name, porta_tensor* out);
porta_status porta_softmax(porta_graph* graph, porta_tensor x, int64_t axis, const char* name, porta_tensor* out);
/* softmax(scale * q kT + mask) v over q [b, h, sq, d], k [b, h, sk, d], v [b, h, sk, dv]; mask (broadcast to
 * [b, h, sq, sk]) may be PORTA_NO_TENSOR; scale 0 means 1 / sqrt(d); causal nonzero: query i sees keys 0..i. */
porta_status porta_attention(porta_graph* graph, porta_tensor q, porta_tensor k, porta_tensor v, porta_tensor mask,
                             float scale, int causal, const char* name, porta_tensor* out);
/* ONNX ReduceSum/Mean/Max/Min over `axis_count` axes (negative ones count from the end; none: every
 * axis); keepdims 0 drops the reduced axes. */
porta_status porta_reduce(porta_graph* graph, porta_tensor x, porta_reduction reduction, const int64_t* axes,
                          size_t axis_count, int keepdims, const char* name, porta_tensor* out);
/* ONNX Reshape: one dimension may be -1 (inferred); 0 copies the input's dimension. */
porta_status porta_reshape(porta_graph* graph, porta_tensor x, const int64_t* shape, size_t rank, const char* name,
                           porta_tensor* out);
porta_status porta_flatten(porta_graph* graph, porta_tensor x, int64_t axis, const char* name, porta_tensor* out);
porta_status porta_transpose(porta_graph* graph, porta_tensor x, const int64_t* perm, size_t rank, const char* name,
                             porta_tensor* out);
porta_status porta_concat(porta_graph* graph, const porta_tensor* xs, size_t count, int64_t axis, const char* name,
                          porta_tensor* out);
porta_status porta_cast(porta_graph* graph, porta_tensor x, porta_dtype to, const char* name, porta_tensor* out);
/* ONNX Slice: `count` starts and ends (clamped; negative counts from the end) along `axes` (NULL: the
   first `count` axes) with `steps` (NULL: all 1; negative walks backwards). */
porta_status porta_slice(porta_graph* graph, porta_tensor x, const int64_t* starts, const int64_t* ends,
                         const int64_t* axes, const int64_t* steps, size_t count, const char* name, porta_tensor* out);
/* ONNX Split: `count` pieces of `sizes` along `axis`, written to outs[0..count). */
porta_status porta_split(porta_graph* graph, porta_tensor x, int64_t axis, const int64_t* sizes, size_t count,
                         const char* name, porta_tensor* outs);
typedef enum porta_pad_mode { PORTA_PAD_CONSTANT = 0, PORTA_PAD_REFLECT = 1, PORTA_PAD_EDGE = 2 } porta_pad_mode;
/* `pads` holds 2 * rank values: the begin pads of every dimension, then the end pads (negative crops). */
porta_status porta_pad(porta_graph* graph, porta_tensor x, const int64_t* pads, size_t pad_count, porta_pad_mode mode,
                       float value, const char* name, porta_tensor* out);
/* numpy broadcast of x to `shape` (ONNX Expand). */
porta_status porta_expand(porta_graph* graph, porta_tensor x, const int64_t* shape, size_t rank, const char* name,
                          porta_tensor* out);
/* ONNX Gather: data indexed along `axis` by i64 or i32 `indices` (negative ones count from the end; one out of
 * range fails the run). */
porta_status porta_gather(porta_graph* graph, porta_tensor data, porta_tensor indices, int64_t axis, const char* name,
                          porta_tensor* out);
typedef enum porta_comparison {
  PORTA_EQUAL = 0, PORTA_LESS, PORTA_LESS_OR_EQUAL, PORTA_GREATER, PORTA_GREATER_OR_EQUAL
} porta_comparison;
/* a `comparison` b with numpy broadcasting (one dtype, any): a bool result. */
porta_status porta_compare(porta_graph* graph, porta_tensor a, porta_tensor b, porta_comparison comparison,
                           const char* name, porta_tensor* out);
typedef enum porta_logical_op { PORTA_NOT = 0, PORTA_AND, PORTA_OR } porta_logical_op;
/* Not of bool a (b is PORTA_NO_TENSOR), or a and/or b with numpy broadcasting. */
porta_status porta_logical(porta_graph* graph, porta_logical_op op, porta_tensor a, porta_tensor b, const char* name,
                           porta_tensor* out);
/* ONNX Where: x where the bool cond holds, else y; all three broadcast. */
porta_status porta_where(porta_graph* graph, porta_tensor cond, porta_tensor x, porta_tensor y, const char* name,
                         porta_tensor* out);

/* ---- graphs from files and the model catalog ---------------------------------------------------- */

/* An ONNX model; `batch` replaces a symbolic or unknown leading input dimension (1 if 0). */
porta_status porta_onnx_load(const char* path, int64_t batch, porta_graph** out);
porta_status porta_onnx_load_bytes(const void* data, size_t bytes, int64_t batch, porta_graph** out);

typedef struct porta_model_options {
  size_t size;
  int64_t batch;      /* 1 */
  int64_t resolution; /* 0: the model's native resolution */
  int64_t classes;    /* 1000 */
  porta_dtype dtype;
  uint64_t seed;      /* of the random weights */
  int training;       /* 0; nonzero: the dropout and stochastic depth torchvision trains the model with */
} porta_model_options;
porta_model_options porta_model_options_default(void);
/* "resnet50", "efficientnet-b0" ... "efficientnet-b7": input "input", output "logits". */
porta_status porta_model_build(const char* name, const porta_model_options* options, porta_graph** out);

/* ---- variables and training (docs/training.md) ------------------------------------------------------ */

/* State kept on the device from run to run, starting from `bytes` of `data` in `dtype` storage. */
porta_status porta_graph_variable(porta_graph* graph, const char* name, const int64_t* shape, size_t rank,
                                  porta_dtype dtype, const void* data, size_t bytes, porta_tensor* out);
/* After each run, `variable` holds `value` (of its shape and dtype). */
porta_status porta_graph_assign(porta_graph* graph, porta_tensor variable, porta_tensor value);

/* Appends d(sum(loss * seed)) / d(t) for each of the `count` tensors of `wrt` and writes them to `grads`
 * (count entries); seed may be PORTA_NO_TENSOR (all ones). Unsupported names an op without a backward rule. */
porta_status porta_gradients(porta_graph* graph, porta_tensor loss, const porta_tensor* wrt, size_t count,
                             porta_tensor seed, porta_tensor* grads);
/* mean((prediction - target)^2), shape [1]. */
porta_status porta_mean_squared_error(porta_graph* graph, porta_tensor prediction, porta_tensor target,
                                      const char* name, porta_tensor* out);
/* Softmax cross-entropy averaged over the rows, shape [1]: float labels of the logits' shape, or i64/i32 class
 * indices, one per row, each in [0, classes) (one outside, a negative one included, fails the run). */
porta_status porta_softmax_cross_entropy_loss(porta_graph* graph, porta_tensor logits, porta_tensor labels,
                                              const char* name, porta_tensor* out);
/* A new graph (free it with porta_graph_free) copying `inference` with every float constant an output depends
 * on as a variable of the same name (a parameter) and batchnorms on batch statistics. Writes up to `capacity`
 * parameters to `params` (may be NULL with capacity 0) and their number to *count. */
porta_status porta_training_graph(const porta_graph* inference, porta_graph** out, porta_tensor* params,
                                  size_t capacity, size_t* count);
typedef struct porta_training_options {
  size_t size;
  porta_dtype precision; /* PORTA_F32; PORTA_BF16 or PORTA_F16: mixed precision around f32 parameters */
  int64_t batch_offset;  /* 0; b: the graph trains samples b, b + 1, ... of a larger batch (a data-parallel
                          * shard), and its dropouts draw that batch's masks for them */
  int channels_last;     /* 0; 1: every conv moved to NHWC before the gradients are taken, so that the
                          * backward pass is channels-last too (what the cpu backend runs fastest) */
} porta_training_options;
porta_training_options porta_training_options_default(void);
/* porta_training_graph with every option; `options` may be NULL (the defaults). */
porta_status porta_training_graph_with_options(const porta_graph* inference, const porta_training_options* options,
                                               porta_graph** out, porta_tensor* params, size_t capacity,
                                               size_t* count);

/* Dynamic loss scaling (f16 training): the gradients of `loss` times the [1] f32 variable "loss_scale",
 * divided by it, written to grads[count]; *finite (may be NULL) a bool [1], true where every gradient is
 * finite, to pass as the optimisers' apply_if; *scale (may be NULL) the scale variable. A step with an inf
 * or NaN halves the scale, `growth_interval` good steps in a row double it (0: it stays). */
typedef struct porta_loss_scale_options {
  size_t size;
  float initial_scale;     /* 65536 */
  int64_t growth_interval; /* 2000 */
} porta_loss_scale_options;
porta_loss_scale_options porta_loss_scale_options_default(void);
porta_status porta_scaled_gradients(porta_graph* graph, porta_tensor loss, const porta_tensor* wrt, size_t count,
                                    const porta_loss_scale_options* options, porta_tensor* grads, porta_tensor* finite,
                                    porta_tensor* scale);

typedef struct porta_sgd_options {
  size_t size;
  float learning_rate; /* 0.01 */
  float momentum;      /* 0: no velocity */
  float weight_decay;  /* 0 */
  porta_tensor apply_if; /* PORTA_NO_TENSOR; a bool [1]: a run where it is false leaves the state as it was */
} porta_sgd_options;
porta_sgd_options porta_sgd_options_default(void);
typedef struct porta_adamw_options {
  size_t size;
  float learning_rate, beta1, beta2, epsilon, weight_decay; /* 1e-3, 0.9, 0.999, 1e-8, 1e-2 */
  porta_tensor apply_if; /* as porta_sgd_options' */
} porta_adamw_options;
porta_adamw_options porta_adamw_options_default(void);
/* Each run of the graph becomes one optimiser step (PyTorch's) of the `count` parameter variables given
 * their gradients; the state lives in variables "<param>.velocity", or "<param>.m", "<param>.v" and
 * "adamw.step". `options` may be NULL (the defaults). Call apply_adamw once per graph. */
porta_status porta_apply_sgd(porta_graph* graph, const porta_tensor* params, const porta_tensor* grads, size_t count,
                             const porta_sgd_options* options);
porta_status porta_apply_adamw(porta_graph* graph, const porta_tensor* params, const porta_tensor* grads,
                               size_t count, const porta_adamw_options* options);
/* A [1] f32 variable `name` (NULL: "dropout.step"), 0 at the first run, that each run increments. */
porta_status porta_step_counter(porta_graph* graph, const char* name, porta_tensor* out);
/* Training-mode dropout: x * mask / (1 - ratio), the mask a pure function of (seed, step, element). */
porta_status porta_dropout(porta_graph* graph, porta_tensor x, porta_tensor step, float ratio, uint64_t seed,
                           const char* name, porta_tensor* out);
typedef struct porta_dropout_options {
  size_t size;
  float ratio;       /* 0.5: the probability of dropping */
  uint64_t seed;     /* 0 */
  int32_t mask_dims; /* -1: a draw per element; k: per index of x's leading k dims (1: stochastic depth) */
  int64_t batch_offset; /* 0; b: x is samples b, b + 1, ... (dim 0) of a larger batch, and draws its mask */
} porta_dropout_options;
porta_dropout_options porta_dropout_options_default(void);
/* porta_dropout with every option; `options` may be NULL (the defaults). */
porta_status porta_dropout_with_options(porta_graph* graph, porta_tensor x, porta_tensor step,
                                        const porta_dropout_options* options, const char* name, porta_tensor* out);

/* ---- devices ------------------------------------------------------------------------------------- */

typedef struct porta_device porta_device;

/* Strings are cut to fit, always NUL-terminated. */
typedef struct porta_device_info {
  size_t size;
  char spec[128];  /* opens this device again, e.g. "cpu:threads=2" */
  char backend[16];
  char name[128];
  char vendor[64];
  char arch[64];
  char driver[64];
  int compute_units, threads, subgroup_size;
  uint64_t memory_total, memory_free;
  int fp16, bf16, matrix_units, tf32;
} porta_device_info;

/* Every usable device (ref excluded): writes up to `capacity` entries of `infos` (each with its size set,
 * or with size 0, which this call sets) and the number found to *count; infos may be NULL with capacity 0. */
porta_status porta_devices(porta_device_info* infos, size_t capacity, size_t* count);

/* "ref", "cpu", "cpu:threads=1", "opencl:0", "cuda:0", "hip:0". */
porta_status porta_device_open(const char* spec, porta_device** out);
void porta_device_free(porta_device* device);
porta_status porta_device_info_get(const porta_device* device, porta_device_info* out);
/* The device's f32 FMA ceiling in GFLOP/s and its copy bandwidth in GB/s (Unsupported where it has
 * no probe); each takes a fraction of a second. */
porta_status porta_device_measure_fma_gflops(const porta_device* device, double* gflops);
porta_status porta_device_measure_copy_gbs(const porta_device* device, double* gbs);

typedef struct porta_compile_options {
  size_t size;
  int optimize;   /* 1: fold, fuse and move convs to the device's layout */
  int allow_tf32; /* 0 */
  porta_impl impl;
  int profile;       /* 0 */
  int poison_memory; /* 0 */
} porta_compile_options;
porta_compile_options porta_compile_options_default(void);

typedef struct porta_memory_estimate {
  uint64_t arena_bytes, constant_bytes, naive_arena_bytes;
} porta_memory_estimate;

typedef struct porta_executable porta_executable;

/* `options` may be NULL (the defaults). The executable does not refer to the graph or device after. */
porta_status porta_compile(const porta_device* device, const porta_graph* graph, const porta_compile_options* options,
                           porta_executable** out);
porta_status porta_estimate_memory(const porta_device* device, const porta_graph* graph,
                                   const porta_compile_options* options, porta_memory_estimate* out);

/* ---- executables --------------------------------------------------------------------------------- */

void porta_executable_free(porta_executable* exe);
porta_status porta_executable_input_desc(const porta_executable* exe, const char* name, porta_tensor_desc* out);
porta_status porta_executable_output_desc(const porta_executable* exe, const char* name, porta_tensor_desc* out);
/* Bytes in the input's storage dtype: exactly the input's size (for a strided input, its whole buffer). */
porta_status porta_set_input(porta_executable* exe, const char* name, const void* data, size_t bytes);
/* Floats, converted to the input's dtype. */
porta_status porta_set_input_f32(porta_executable* exe, const char* name, const float* values, size_t count);
porta_status porta_run(porta_executable* exe);
/* Exactly the output's size in its storage dtype, or its element count as floats. */
porta_status porta_get_output(const porta_executable* exe, const char* name, void* data, size_t bytes);
porta_status porta_get_output_f32(const porta_executable* exe, const char* name, float* values, size_t count);
porta_status porta_last_run_time(const porta_executable* exe, double* seconds, porta_run_clock* clock);
/* A variable's description, and its value in its storage dtype (exactly its size): read from the device,
 * or written to it (a checkpoint saved and restored). */
porta_status porta_executable_variable_desc(const porta_executable* exe, const char* name, porta_tensor_desc* out);
porta_status porta_get_variable(const porta_executable* exe, const char* name, void* data, size_t bytes);
porta_status porta_set_variable(porta_executable* exe, const char* name, const void* data, size_t bytes);
/* Device memory of the plan (activation arena plus constants), known before the first run. */
porta_status porta_planned_peak_bytes(const porta_executable* exe, uint64_t* bytes);

#ifdef __cplusplus
}
#endif

#endif /* PORTA_PORTA_H */
