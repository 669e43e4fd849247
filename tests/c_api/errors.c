/* Every error path of porta.h: NULL and dead handles, NULL pointers, out-of-range enums, parameter
 * structs of the wrong size, buffers of the wrong size, bad shapes, unknown names, devices and models,
 * malformed files. Each gives its status and a message, never a crash. */
#include <string.h>

#include "check.h"

/* A relu model: input x [N, 4], output y (made with onnx.helper, opset 13). */
static const unsigned char relu_onnx[] = {
    0x08, 0x08, 0x12, 0x00, 0x3a, 0x3d, 0x0a, 0x0c, 0x0a, 0x01, 0x78, 0x12, 0x01, 0x79, 0x22, 0x04, 0x52, 0x65, 0x6c,
    0x75, 0x12, 0x01, 0x67, 0x5a, 0x14, 0x0a, 0x01, 0x78, 0x12, 0x0f, 0x0a, 0x0d, 0x08, 0x01, 0x12, 0x09, 0x0a, 0x03,
    0x12, 0x01, 0x4e, 0x0a, 0x02, 0x08, 0x04, 0x62, 0x14, 0x0a, 0x01, 0x79, 0x12, 0x0f, 0x0a, 0x0d, 0x08, 0x01, 0x12,
    0x09, 0x0a, 0x03, 0x12, 0x01, 0x4e, 0x0a, 0x02, 0x08, 0x04, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x0d};

static int message_has(const char* part) { return strstr(porta_last_error(), part) != NULL; }

static void status_strings(void) {
  CHECK(strcmp(porta_status_string(PORTA_OK), "ok") == 0);
  CHECK(strcmp(porta_status_string(PORTA_SHAPE_MISMATCH), "shape mismatch") == 0);
  CHECK(strcmp(porta_status_string((porta_status)99), "unknown status") == 0);
  CHECK(porta_dtype_size(PORTA_F32) == 4 && porta_dtype_size(PORTA_BF16) == 2);
  CHECK(porta_dtype_size((porta_dtype)7) == 0);
}

static void handles(void) {
  porta_tensor t;
  const int64_t shape[] = {2, 3};
  CHECK_STATUS(porta_graph_create(NULL), PORTA_INVALID_ARGUMENT);
  CHECK(message_has("out is NULL"));
  CHECK_STATUS(porta_graph_input(NULL, "x", shape, 2, PORTA_F32, NULL, &t), PORTA_INVALID_ARGUMENT);
  CHECK(message_has("graph is NULL"));
  CHECK_STATUS(porta_relu(NULL, t, NULL, &t), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_compile(NULL, NULL, NULL, NULL), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_run(NULL), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_set_input(NULL, "x", NULL, 0), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_device_info_get(NULL, NULL), PORTA_INVALID_ARGUMENT);
  /* A handle of another kind is not live for this one. */
  porta_graph* graph = NULL;
  CHECK_OK(porta_graph_create(&graph));
  CHECK_STATUS(porta_run((porta_executable*)(void*)graph), PORTA_INVALID_ARGUMENT);
  CHECK(message_has("not a live handle"));
  porta_graph_free(graph);
  porta_graph_free(NULL);
  porta_device_free(NULL);
  porta_executable_free(NULL);
}

static void graph_building(void) {
  porta_graph* g = NULL;
  porta_tensor x, w, y;
  const int64_t shape[] = {2, 3};
  const float values[6] = {0};
  CHECK_OK(porta_graph_create(&g));
  CHECK_STATUS(porta_graph_input(g, NULL, shape, 2, PORTA_F32, NULL, &x), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_graph_input(g, "x", NULL, 2, PORTA_F32, NULL, &x), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_graph_input(g, "x", shape, 2, (porta_dtype)6, NULL, &x), PORTA_INVALID_ARGUMENT);
  CHECK(message_has("dtype is 6"));
  CHECK_STATUS(porta_graph_input(g, "x", shape, 2, PORTA_F32, NULL, NULL), PORTA_INVALID_ARGUMENT);
  CHECK_OK(porta_graph_input(g, "x", shape, 2, PORTA_F32, NULL, &x)); /* the failed calls added nothing */
  CHECK_STATUS(porta_graph_input(g, "x", shape, 2, PORTA_F32, NULL, &y), PORTA_INVALID_ARGUMENT);
  /* Constants: the count or byte size must be the shape's. */
  CHECK_STATUS(porta_graph_constant_f32(g, "w", shape, 2, PORTA_F32, values, 5, &w), PORTA_SHAPE_MISMATCH);
  CHECK_STATUS(porta_graph_constant(g, "w", shape, 2, PORTA_F16, values, 24, &w), PORTA_SHAPE_MISMATCH);
  CHECK_STATUS(porta_graph_constant(g, "w", shape, 2, PORTA_F32, NULL, 24, &w), PORTA_INVALID_ARGUMENT);
  CHECK_OK(porta_graph_constant(g, "w", shape, 2, PORTA_F16, values, 12, &w));
  /* Shapes, dtypes and tensors that do not fit. */
  CHECK_STATUS(porta_matmul(g, x, x, 0, 0, NULL, &y), PORTA_SHAPE_MISMATCH);
  CHECK(message_has("matmul"));
  CHECK_STATUS(porta_add(g, x, w, NULL, &y), PORTA_DTYPE_MISMATCH);
  CHECK_STATUS(porta_relu(g, (porta_tensor){999}, NULL, &y), PORTA_NOT_FOUND);
  CHECK_STATUS(porta_relu(g, x, NULL, NULL), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_reshape(g, x, shape, 1, NULL, &y), PORTA_SHAPE_MISMATCH);
  CHECK_STATUS(porta_concat(g, NULL, 2, 0, NULL, &y), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_split(g, x, 0, shape, 1, NULL, NULL), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_slice(g, x, NULL, NULL, NULL, NULL, 1, NULL, &y), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_pad(g, x, NULL, 0, (porta_pad_mode)3, 0.0f, NULL, &y), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_cast(g, x, (porta_dtype)-1, NULL, &y), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_global_avg_pool(g, x, (porta_layout)2, NULL, &y), PORTA_INVALID_ARGUMENT);
  /* Parameter structs: a size that is not this library's, an enum out of range. */
  porta_gemm_params gp = porta_gemm_params_default();
  gp.size = sizeof gp + 8;
  CHECK_STATUS(porta_gemm(g, x, x, PORTA_NO_TENSOR, &gp, NULL, &y), PORTA_INVALID_ARGUMENT);
  CHECK(message_has("porta_gemm_params.size"));
  gp = porta_gemm_params_default();
  gp.activation = (porta_activation)42;
  CHECK_STATUS(porta_gemm(g, x, x, PORTA_NO_TENSOR, &gp, NULL, &y), PORTA_INVALID_ARGUMENT);
  porta_conv2d_params cp = porta_conv2d_params_default();
  cp.size = 0;
  CHECK_STATUS(porta_conv2d(g, x, x, PORTA_NO_TENSOR, PORTA_NO_TENSOR, &cp, NULL, &y), PORTA_INVALID_ARGUMENT);
  porta_pool2d_params pp = porta_pool2d_params_default();
  pp.size = 1;
  CHECK_STATUS(porta_max_pool2d(g, x, &pp, NULL, &y), PORTA_INVALID_ARGUMENT);
  /* Inspection. */
  size_t count = 0;
  const char* name = NULL;
  CHECK_OK(porta_graph_input_count(g, &count));
  CHECK(count == 1);
  CHECK_OK(porta_graph_input_at(g, 0, &name, &y));
  CHECK(name != NULL && strcmp(name, "x") == 0 && y.id == x.id);
  CHECK_STATUS(porta_graph_input_at(g, 1, &name, &y), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_graph_output_at(g, 0, &name, &y), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_graph_tensor_desc(g, x, NULL), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_graph_output(g, "y", (porta_tensor){-1}), PORTA_NOT_FOUND);
  porta_graph_free(g);
}

static void devices(void) {
  porta_device* d = NULL;
  size_t count = 0;
  CHECK_STATUS(porta_devices(NULL, 2, &count), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_devices(NULL, 0, NULL), PORTA_INVALID_ARGUMENT);
  porta_device_info info;
  info.size = 3;
  CHECK_STATUS(porta_devices(&info, 1, &count), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_device_open("nosuch", &d), PORTA_NOT_FOUND);
  CHECK(message_has("nosuch"));
  CHECK_STATUS(porta_device_open("cpu:threads=x", &d), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_device_open(NULL, &d), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_device_open("cpu", NULL), PORTA_INVALID_ARGUMENT);
  CHECK_OK(porta_device_open("cpu:threads=1", &d));
  info.size = 0;
  CHECK_OK(porta_device_info_get(d, &info));
  CHECK(strcmp(info.backend, "cpu") == 0 && info.threads == 1 && info.size == sizeof info);
  porta_device_free(d);
}

/* A graph y = relu(x) of 6 elements on cpu: compile options, inputs, outputs and measurements. */
static void executables(void) {
  porta_graph* g = NULL;
  porta_device* cpu = NULL;
  porta_executable* exe = NULL;
  porta_tensor x, y;
  const int64_t shape[] = {2, 3};
  float in[6] = {-1, 2, -3, 4, -5, 6}, out[6] = {0};
  CHECK_OK(porta_graph_create(&g));
  CHECK_OK(porta_device_open("cpu", &cpu));
  CHECK_OK(porta_graph_input(g, "x", shape, 2, PORTA_F32, NULL, &x));
  CHECK_STATUS(porta_compile(cpu, g, NULL, &exe), PORTA_INVALID_ARGUMENT); /* no outputs */
  CHECK_OK(porta_relu(g, x, "act", &y));
  CHECK_OK(porta_graph_output(g, "y", y));
  porta_compile_options o = porta_compile_options_default();
  o.impl = (porta_impl)9;
  CHECK_STATUS(porta_compile(cpu, g, &o, &exe), PORTA_INVALID_ARGUMENT);
  o = porta_compile_options_default();
  o.size = sizeof o - 1;
  CHECK_STATUS(porta_estimate_memory(cpu, g, &o, NULL), PORTA_INVALID_ARGUMENT);
  porta_memory_estimate m;
  CHECK_OK(porta_estimate_memory(cpu, g, NULL, &m));
  CHECK(m.arena_bytes >= 24);
  CHECK_OK(porta_compile(cpu, g, NULL, &exe));
  CHECK_STATUS(porta_set_input_f32(exe, "x", in, 5), PORTA_SHAPE_MISMATCH);
  CHECK_STATUS(porta_set_input(exe, "x", in, 25), PORTA_SHAPE_MISMATCH);
  CHECK_STATUS(porta_set_input_f32(exe, "nope", in, 6), PORTA_NOT_FOUND);
  CHECK_STATUS(porta_set_input_f32(exe, "x", NULL, 6), PORTA_INVALID_ARGUMENT);
  CHECK_OK(porta_set_input(exe, "x", in, sizeof in));
  CHECK_OK(porta_run(exe));
  CHECK_STATUS(porta_get_output_f32(exe, "y", out, 7), PORTA_SHAPE_MISMATCH);
  CHECK_STATUS(porta_get_output(exe, "y", out, 12), PORTA_SHAPE_MISMATCH);
  CHECK_STATUS(porta_get_output(exe, "x", out, sizeof out), PORTA_NOT_FOUND);
  CHECK_OK(porta_get_output(exe, "y", out, sizeof out));
  CHECK(out[0] == 0 && out[1] == 2 && out[4] == 0 && out[5] == 6);
  double seconds = -1;
  porta_run_clock clock = PORTA_CLOCK_NONE;
  uint64_t peak = 0;
  porta_tensor_desc d;
  CHECK_OK(porta_last_run_time(exe, &seconds, &clock));
  CHECK(seconds >= 0 && clock == PORTA_CLOCK_HOST);
  CHECK_STATUS(porta_last_run_time(exe, NULL, NULL), PORTA_INVALID_ARGUMENT);
  CHECK_OK(porta_planned_peak_bytes(exe, &peak));
  CHECK(peak >= 24);
  CHECK_OK(porta_executable_output_desc(exe, "y", &d));
  CHECK(d.dtype == PORTA_F32 && d.rank == 2 && d.shape[0] == 2 && d.shape[1] == 3);
  CHECK_STATUS(porta_executable_input_desc(exe, "y", &d), PORTA_NOT_FOUND);
  porta_executable_free(exe);
  porta_device_free(cpu);
  porta_graph_free(g);
}

static void onnx_and_models(void) {
  porta_graph* g = NULL;
  const unsigned char junk[] = {0xff, 0xff, 0xff};
  CHECK_STATUS(porta_onnx_load("/nonexistent/model.onnx", 1, &g), PORTA_IO_ERROR);
  CHECK_STATUS(porta_onnx_load_bytes(junk, sizeof junk, 1, &g), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_onnx_load_bytes(relu_onnx, sizeof relu_onnx, -2, &g), PORTA_INVALID_ARGUMENT);
  CHECK_STATUS(porta_onnx_load_bytes(NULL, 4, 1, &g), PORTA_INVALID_ARGUMENT);
  CHECK_OK(porta_onnx_load_bytes(relu_onnx, sizeof relu_onnx, 3, &g));
  porta_tensor x;
  porta_tensor_desc d;
  CHECK_OK(porta_graph_input_at(g, 0, NULL, &x));
  CHECK_OK(porta_graph_tensor_desc(g, x, &d));
  CHECK(d.rank == 2 && d.shape[0] == 3 && d.shape[1] == 4);
  porta_graph_free(g);
  g = NULL;

  porta_model_options o = porta_model_options_default();
  CHECK_STATUS(porta_model_build("resnet5", &o, &g), PORTA_NOT_FOUND);
  CHECK(message_has("efficientnet-b0"));
  o.dtype = (porta_dtype)6;
  CHECK_STATUS(porta_model_build("resnet50", &o, &g), PORTA_INVALID_ARGUMENT);
  o = porta_model_options_default();
  o.batch = 2;
  o.resolution = 64;
  o.classes = 10;
  CHECK_OK(porta_model_build("efficientnet-b0", &o, &g));
  porta_device* ref = NULL;
  porta_memory_estimate m = {0, 0, 0};
  CHECK_OK(porta_device_open("ref", &ref));
  CHECK_OK(porta_estimate_memory(ref, g, NULL, &m));
  CHECK(m.constant_bytes > 1000000 && m.arena_bytes > 0 && m.arena_bytes <= m.naive_arena_bytes);
  porta_device_free(ref);
  porta_graph_free(g);
}

void run_error_paths(void) {
  status_strings();
  handles();
  graph_building();
  devices();
  executables();
  onnx_and_models();
}
