/* Training from C: gradients against the analytic ones, a classifier trained to high accuracy with SGD,
 * a checkpoint read and written through the variables and resumed bit for bit, the classifier in mixed
 * precision (bf16, and f16 with loss scaling skipping a step that overflows), and the error paths. */
#include <math.h>
#include <string.h>

#include "check.h"

enum { batch = 32, features = 4, hidden = 16, classes = 2 };

/* A fixed pseudo-random stream in [-1, 1): the tests' data and weights do not depend on the C library. */
static float next_uniform(uint64_t* state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (float)((double)(*state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static void fill(float* v, size_t count, uint64_t seed, float scale) {
  for (size_t i = 0; i < count; ++i) v[i] = scale * next_uniform(&seed);
}

/* Points in 4 dimensions labelled by the sign of x0 + x1 - x2: a boundary an mlp learns quickly. */
static void points(float* x, int64_t* labels, int count, uint64_t seed) {
  fill(x, (size_t)count * features, seed, 1.0f);
  for (int i = 0; i < count; ++i) labels[i] = x[i * features] + x[i * features + 1] - x[i * features + 2] > 0;
}

static void gradients_of_a_squared_error(porta_device* device) {
  porta_graph* g = NULL;
  const int64_t xs[] = {3, 2}, ws[] = {2, 1};
  float x[6], w[2], t[3], loss, dw[2];
  fill(x, 6, 1, 1.0f), fill(w, 2, 2, 1.0f), fill(t, 3, 3, 1.0f);
  porta_tensor xi, ti, wc, y, l, grad;
  CHECK_OK(porta_graph_create(&g));
  CHECK_OK(porta_graph_input(g, "x", xs, 2, PORTA_F32, NULL, &xi));
  CHECK_OK(porta_graph_input(g, "t", (const int64_t[]){3, 1}, 2, PORTA_F32, NULL, &ti));
  CHECK_OK(porta_graph_constant_f32(g, "w", ws, 2, PORTA_F32, w, 2, &wc));
  CHECK_OK(porta_matmul(g, xi, wc, 0, 0, NULL, &y));
  CHECK_OK(porta_mean_squared_error(g, y, ti, "loss", &l));
  CHECK_OK(porta_gradients(g, l, &wc, 1, PORTA_NO_TENSOR, &grad));
  CHECK_OK(porta_graph_output(g, "loss", l));
  CHECK_OK(porta_graph_output(g, "dw", grad));
  porta_executable* exe = NULL;
  CHECK_OK(porta_compile(device, g, NULL, &exe));
  CHECK_OK(porta_set_input_f32(exe, "x", x, 6));
  CHECK_OK(porta_set_input_f32(exe, "t", t, 3));
  CHECK_OK(porta_run(exe));
  CHECK_OK(porta_get_output_f32(exe, "loss", &loss, 1));
  CHECK_OK(porta_get_output_f32(exe, "dw", dw, 2));
  double want_loss = 0, want_dw[2] = {0, 0};
  for (int i = 0; i < 3; ++i) {
    const double r = x[2 * i] * w[0] + x[2 * i + 1] * w[1] - t[i];
    want_loss += r * r / 3;
    for (int j = 0; j < 2; ++j) want_dw[j] += 2 * r * x[2 * i + j] / 3;
  }
  CHECK(fabs(loss - want_loss) < 1e-5 && fabs(dw[0] - want_dw[0]) < 1e-5 && fabs(dw[1] - want_dw[1]) < 1e-5);
  porta_executable_free(exe);
  porta_graph_free(g);
}

/* The classifier's training step: an mlp 4 -> 16 -> 2 made trainable in `precision`, its loss an output, SGD
 * on every run; in f16 the gradients loss-scaled (from 1024, doubling every 20 good steps) and SGD applied
 * where they are finite. */
static porta_graph* classifier_step(porta_dtype precision) {
  porta_graph *net = NULL, *g = NULL;
  float w1[hidden * features], w2[classes * hidden];
  fill(w1, hidden * features, 4, 0.5f), fill(w2, classes * hidden, 5, 0.5f);
  porta_tensor x, c1, c2, h, a, logits, labels, loss, params[2], grads[2];
  porta_gemm_params p = porta_gemm_params_default();
  p.trans_b = 1;
  CHECK_OK(porta_graph_create(&net));
  CHECK_OK(porta_graph_input(net, "x", (const int64_t[]){batch, features}, 2, PORTA_F32, NULL, &x));
  CHECK_OK(porta_graph_constant_f32(net, "w1", (const int64_t[]){hidden, features}, 2, PORTA_F32, w1,
                                    hidden * features, &c1));
  CHECK_OK(porta_graph_constant_f32(net, "w2", (const int64_t[]){classes, hidden}, 2, PORTA_F32, w2,
                                    classes * hidden, &c2));
  CHECK_OK(porta_gemm(net, x, c1, PORTA_NO_TENSOR, &p, NULL, &h));
  CHECK_OK(porta_tanh(net, h, NULL, &a));
  CHECK_OK(porta_gemm(net, a, c2, PORTA_NO_TENSOR, &p, NULL, &logits));
  CHECK_OK(porta_graph_output(net, "logits", logits));
  size_t count = 0;
  porta_training_options training = porta_training_options_default();
  training.precision = precision;
  if (precision == PORTA_F32) CHECK_OK(porta_training_graph(net, &g, params, 2, &count));
  else CHECK_OK(porta_training_graph_with_options(net, &training, &g, params, 2, &count));
  CHECK(count == 2);
  porta_graph_free(net);
  CHECK_OK(porta_graph_output_at(g, 0, NULL, &logits));
  CHECK_OK(porta_graph_input(g, "labels", (const int64_t[]){batch}, 1, PORTA_I64, NULL, &labels));
  CHECK_OK(porta_softmax_cross_entropy_loss(g, logits, labels, "loss", &loss));
  CHECK_OK(porta_graph_output(g, "loss", loss));
  porta_sgd_options sgd = porta_sgd_options_default();
  sgd.learning_rate = 0.2f, sgd.momentum = 0.9f;
  if (precision == PORTA_F16) {
    porta_loss_scale_options scaling = porta_loss_scale_options_default();
    scaling.initial_scale = 1024.0f, scaling.growth_interval = 20; /* 8192 after 60 steps: no overflow */
    CHECK_OK(porta_scaled_gradients(g, loss, params, 2, &scaling, grads, &sgd.apply_if, NULL));
  } else {
    CHECK_OK(porta_gradients(g, loss, params, 2, PORTA_NO_TENSOR, grads));
  }
  CHECK_OK(porta_apply_sgd(g, params, grads, 2, &sgd));
  return g;
}

/* Runs `steps` training steps on the batches from `first` on, and returns the last loss. */
static float train(porta_executable* exe, int first, int steps) {
  float x[batch * features], loss = 0;
  int64_t labels[batch];
  for (int s = first; s < first + steps; ++s) {
    points(x, labels, batch, 100 + (uint64_t)s);
    CHECK_OK(porta_set_input_f32(exe, "x", x, batch * features));
    CHECK_OK(porta_set_input(exe, "labels", labels, sizeof labels));
    CHECK_OK(porta_run(exe));
    CHECK_OK(porta_get_output_f32(exe, "loss", &loss, 1));
  }
  return loss;
}

static double accuracy(const porta_executable* exe) {
  float w1[hidden * features], w2[classes * hidden], x[512 * features];
  int64_t labels[512];
  CHECK_OK(porta_get_variable(exe, "w1", w1, sizeof w1));
  CHECK_OK(porta_get_variable(exe, "w2", w2, sizeof w2));
  points(x, labels, 512, 7);
  int right = 0;
  for (int i = 0; i < 512; ++i) {
    double logit[classes] = {0, 0};
    for (int j = 0; j < hidden; ++j) {
      double h = 0;
      for (int k = 0; k < features; ++k) h += w1[j * features + k] * x[i * features + k];
      for (int c = 0; c < classes; ++c) logit[c] += w2[c * hidden + j] * tanh(h);
    }
    right += (logit[1] > logit[0]) == (labels[i] == 1);
  }
  return right / 512.0;
}

static size_t variable_bytes(const porta_executable* exe, const char* name) {
  porta_tensor_desc d;
  CHECK_OK(porta_executable_variable_desc(exe, name, &d));
  size_t bytes = porta_dtype_size(d.dtype);
  for (size_t i = 0; i < d.rank; ++i) bytes *= (size_t)d.shape[i];
  return bytes;
}

static void classifier_trains_and_resumes(porta_device* device) {
  porta_graph* g = classifier_step(PORTA_F32);
  porta_executable *straight = NULL, *first = NULL, *resumed = NULL;
  CHECK_OK(porta_compile(device, g, NULL, &straight));
  const float loss_start = train(straight, 0, 1), loss_end = train(straight, 1, 59);
  CHECK(loss_end < 0.5f * loss_start);
  CHECK(accuracy(straight) >= 0.95);
  /* Three steps, the variables saved and written into a fresh executable, three more: as six in a row. */
  porta_executable* six = NULL;
  CHECK_OK(porta_compile(device, g, NULL, &six));
  CHECK_OK(porta_compile(device, g, NULL, &first));
  CHECK_OK(porta_compile(device, g, NULL, &resumed));
  train(six, 0, 6);
  train(first, 0, 3);
  const char* names[] = {"w1", "w2", "w1.velocity", "w2.velocity"};
  for (int i = 0; i < 4; ++i) {
    float saved[hidden * features];
    const size_t bytes = variable_bytes(first, names[i]);
    CHECK(bytes <= sizeof saved);
    CHECK_OK(porta_get_variable(first, names[i], saved, bytes));
    CHECK_OK(porta_set_variable(resumed, names[i], saved, bytes));
  }
  train(resumed, 3, 3);
  for (int i = 0; i < 4; ++i) {
    float want[hidden * features], got[hidden * features];
    const size_t bytes = variable_bytes(six, names[i]);
    CHECK_OK(porta_get_variable(six, names[i], want, bytes));
    CHECK_OK(porta_get_variable(resumed, names[i], got, bytes));
    CHECK(memcmp(want, got, bytes) == 0);
  }
  float one;
  CHECK_STATUS(porta_get_variable(six, "w1", &one, sizeof one), PORTA_SHAPE_MISMATCH);
  CHECK_STATUS(porta_set_variable(six, "nothing", &one, sizeof one), PORTA_NOT_FOUND);
  porta_executable_free(six), porta_executable_free(first), porta_executable_free(resumed);
  porta_executable_free(straight);
  porta_graph_free(g);
}

static float variable_f32(const porta_executable* exe, const char* name) {
  float value = 0;
  CHECK_OK(porta_get_variable(exe, name, &value, sizeof value));
  return value;
}

/* bf16 and f16 train the classifier about as well as f32; f16's loss scale doubles every 20 good steps, and
 * a scale so large that the gradients overflow skips the step (the weights and velocities kept) and halves. */
static void classifier_trains_in_mixed_precision(porta_device* device) {
  const porta_dtype precisions[] = {PORTA_BF16, PORTA_F16};
  for (int p = 0; p < 2; ++p) {
    porta_graph* g = classifier_step(precisions[p]);
    porta_executable* exe = NULL;
    CHECK_OK(porta_compile(device, g, NULL, &exe));
    const float loss_start = train(exe, 0, 1), loss_end = train(exe, 1, 59);
    CHECK(loss_end < 0.5f * loss_start);
    CHECK(accuracy(exe) >= 0.9);
    if (precisions[p] == PORTA_F16) {
      CHECK(variable_f32(exe, "loss_scale") == 8192.0f); /* 60 good steps */
      const float huge = 1e30f;
      float w1[hidden * features], after[hidden * features], velocity[hidden * features];
      float velocity_after[hidden * features];
      CHECK_OK(porta_set_variable(exe, "loss_scale", &huge, sizeof huge));
      CHECK_OK(porta_get_variable(exe, "w1", w1, sizeof w1));
      CHECK_OK(porta_get_variable(exe, "w1.velocity", velocity, sizeof velocity));
      train(exe, 60, 1);
      CHECK_OK(porta_get_variable(exe, "w1", after, sizeof after));
      CHECK_OK(porta_get_variable(exe, "w1.velocity", velocity_after, sizeof velocity_after));
      CHECK(memcmp(w1, after, sizeof w1) == 0 && memcmp(velocity, velocity_after, sizeof velocity) == 0);
      CHECK(variable_f32(exe, "loss_scale") == huge * 0.5f && variable_f32(exe, "loss_scale.good_steps") == 0.0f);
    }
    porta_executable_free(exe);
    porta_graph_free(g);
  }
}

static void training_errors(void) {
  porta_graph *g = NULL, *t = NULL;
  porta_tensor x, i, y, grad, step;
  size_t count;
  CHECK_OK(porta_graph_create(&g));
  CHECK_OK(porta_graph_input(g, "x", (const int64_t[]){3}, 1, PORTA_F32, NULL, &x));
  CHECK_OK(porta_graph_input(g, "i", (const int64_t[]){3}, 1, PORTA_I64, NULL, &i));
  CHECK_OK(porta_relu(g, x, NULL, &y));
  CHECK_STATUS(porta_gradients(g, y, &i, 1, PORTA_NO_TENSOR, &grad), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_gradients(g, y, NULL, 1, PORTA_NO_TENSOR, &grad), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_training_graph(g, NULL, NULL, 0, &count), PORTA_INVALID_ARGUMENT);
  CHECK_OK(porta_training_graph(g, &t, NULL, 0, &count));  /* no constants: no parameters */
  CHECK(count == 0);
  porta_graph_free(t);
  porta_training_options training = porta_training_options_default();
  CHECK(training.precision == PORTA_F32 && training.batch_offset == 0 && training.channels_last == 0);
  training.precision = PORTA_I64;
  CHECK_STATUS(porta_training_graph_with_options(g, &training, &t, NULL, 0, &count), PORTA_INVALID_ARGUMENT);
  training = porta_training_options_default();
  training.batch_offset = -1;
  CHECK_STATUS(porta_training_graph_with_options(g, &training, &t, NULL, 0, &count), PORTA_INVALID_ARGUMENT);
  training.size = 4;
  CHECK_STATUS(porta_training_graph_with_options(g, &training, &t, NULL, 0, &count), PORTA_INVALID_ARGUMENT);
  porta_loss_scale_options scaling = porta_loss_scale_options_default();
  CHECK(scaling.initial_scale == 65536.0f && scaling.growth_interval == 2000);
  scaling.initial_scale = 0.0f;
  CHECK_STATUS(porta_scaled_gradients(g, y, &x, 1, &scaling, &grad, NULL, NULL), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_scaled_gradients(g, y, &x, 1, NULL, NULL, NULL, NULL), PORTA_INVALID_ARGUMENT);
  CHECK_OK(porta_step_counter(g, NULL, &step));
  CHECK_STATUS(porta_dropout(g, x, step, 1.0f, 0, NULL, &y), PORTA_INVALID_ARGUMENT);
  porta_dropout_options dropout = porta_dropout_options_default();
  CHECK(dropout.ratio == 0.5f && dropout.mask_dims == -1 && dropout.batch_offset == 0);
  dropout.mask_dims = 1;
  CHECK_OK(porta_dropout_with_options(g, x, step, &dropout, "per_sample", &y));
  dropout.mask_dims = 2; /* x has one dim */
  CHECK_STATUS(porta_dropout_with_options(g, x, step, &dropout, NULL, &y), PORTA_INVALID_ARGUMENT);
  dropout.mask_dims = -1, dropout.batch_offset = 5; /* x is samples 5, 6 and 7 of a larger batch */
  CHECK_OK(porta_dropout_with_options(g, x, step, &dropout, "shard", &y));
  dropout.batch_offset = -1;
  CHECK_STATUS(porta_dropout_with_options(g, x, step, &dropout, NULL, &y), PORTA_INVALID_ARGUMENT);
  dropout.size = 4;
  CHECK_STATUS(porta_dropout_with_options(g, x, step, &dropout, NULL, &y), PORTA_INVALID_ARGUMENT);
  porta_sgd_options sgd = porta_sgd_options_default();
  sgd.size = 4;
  CHECK_STATUS(porta_apply_sgd(g, &x, &x, 1, &sgd), PORTA_INVALID_ARGUMENT);
  porta_graph_free(g);
}

/* On cpu where this build has it, else on ref. */
void run_training(void) {
  porta_device* device = NULL;
  if (porta_device_open("cpu", &device) != PORTA_OK) CHECK_OK(porta_device_open("ref", &device));
  gradients_of_a_squared_error(device);
  classifier_trains_and_resumes(device);
  classifier_trains_in_mixed_precision(device);
  training_errors();
  porta_device_free(device);
}
