/* porta from C: y = relu(x W + b) built once, run on every device found and checked against ref. */
#include <math.h>
#include <stdio.h>

#include <porta/porta.h>

#define CHECK(call)                                                                         \
  do {                                                                                      \
    if ((call) != PORTA_OK) {                                                               \
      fprintf(stderr, "porta_c_example: %s: %s\n", #call, porta_last_error());              \
      return 1;                                                                             \
    }                                                                                       \
  } while (0)

/* Compiles `graph` for `spec`, runs it on `x` and reads y [4, 3] into `y`. */
static int run_on(const char* spec, const porta_graph* graph, const float* x, float* y) {
  porta_device* device = NULL;
  porta_executable* exe = NULL;
  CHECK(porta_device_open(spec, &device));
  CHECK(porta_compile(device, graph, NULL, &exe));
  CHECK(porta_set_input_f32(exe, "x", x, 4 * 8));
  CHECK(porta_run(exe));
  CHECK(porta_get_output_f32(exe, "y", y, 4 * 3));
  porta_executable_free(exe);
  porta_device_free(device);
  return 0;
}

int main(void) {
  float x[4 * 8], w[8 * 3], b[3] = {0.5f, -0.5f, 0.0f}, want[4 * 3], got[4 * 3];
  for (int i = 0; i < 4 * 8; ++i) x[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < 8 * 3; ++i) w[i] = 0.1f * (float)(i % 5) - 0.2f;

  porta_graph* graph = NULL;
  porta_tensor tx, tw, tb, ty;
  const int64_t x_shape[] = {4, 8}, w_shape[] = {8, 3}, b_shape[] = {3};
  CHECK(porta_graph_create(&graph));
  CHECK(porta_graph_input(graph, "x", x_shape, 2, PORTA_F32, NULL, &tx));
  CHECK(porta_graph_constant_f32(graph, "w", w_shape, 2, PORTA_F32, w, 8 * 3, &tw));
  CHECK(porta_graph_constant_f32(graph, "b", b_shape, 1, PORTA_F32, b, 3, &tb));
  porta_gemm_params p = porta_gemm_params_default();
  p.activation = PORTA_ACT_RELU;
  CHECK(porta_gemm(graph, tx, tw, tb, &p, "fc", &ty));
  CHECK(porta_graph_output(graph, "y", ty));

  if (run_on("ref", graph, x, want) != 0) return 1;
  porta_device_info devices[16] = {0};
  size_t count = 0;
  CHECK(porta_devices(devices, 16, &count));
  int failures = 0;
  for (size_t d = 0; d < count && d < 16; ++d) {
    if (run_on(devices[d].spec, graph, x, got) != 0) return 1;
    double worst = 0;
    for (int i = 0; i < 4 * 3; ++i) worst = fmax(worst, fabs(got[i] - want[i]));
    failures += worst > 1e-5;
    printf("%-24s %-40s max |diff| vs ref %.2e  %s\n", devices[d].spec, devices[d].name, worst,
           worst > 1e-5 ? "MISMATCH" : "ok");
  }
  porta_graph_free(graph);
  return failures == 0 ? 0 : 1;
}
