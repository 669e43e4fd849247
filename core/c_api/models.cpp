// porta.h: graphs from ONNX files and from the model catalog (include/porta/onnx.hpp, models.hpp).
#include <span>

#include "core/c_api/handles.hpp"
#include "porta/onnx.hpp"

using namespace porta::c_api;

namespace {

porta::onnx::LoadOptions load_options(int64_t batch) {
  if (batch < 0) invalid("batch is " + std::to_string(batch));
  porta::onnx::LoadOptions options;
  options.batch = batch == 0 ? 1 : batch;
  return options;
}

// Hands a new graph to the caller; `result` is the caller's out pointer, checked before the graph is made.
void give(porta_graph*& result, porta::Graph graph) { result = new porta_graph{.graph = std::move(graph)}; }

}  // namespace

extern "C" {

porta_status porta_onnx_load(const char* path, int64_t batch, porta_graph** out) {
  return guard([&] { give(out_ref(out, "out"), porta::onnx::load(text(path, "path"), load_options(batch))); });
}

porta_status porta_onnx_load_bytes(const void* data, size_t bytes, int64_t batch, porta_graph** out) {
  return guard([&] {
    if (data == nullptr && bytes > 0) invalid("data is NULL");
    porta_graph*& result = out_ref(out, "out");
    give(result, porta::onnx::load_bytes(std::span(static_cast<const std::byte*>(data), bytes), load_options(batch)));
  });
}

porta_model_options porta_model_options_default(void) {
  return {.size = sizeof(porta_model_options), .batch = 1, .resolution = 0, .classes = 1000, .dtype = PORTA_F32,
          .seed = 1, .training = 0};
}

porta_status porta_model_build(const char* name, const porta_model_options* options, porta_graph** out) {
  return guard([&] {
    const porta_model_options o = params_or(options, porta_model_options_default(), "porta_model_options");
    const porta::models::ModelOptions m{.batch = o.batch, .resolution = o.resolution, .classes = o.classes,
                                        .dtype = dtype_of(o.dtype), .seed = o.seed, .training = o.training != 0};
    give(out_ref(out, "out"), porta::models::build(text(name, "name"), m));
  });
}

}  // extern "C"
