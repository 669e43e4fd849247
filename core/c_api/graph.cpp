// porta.h: graphs, their inputs, constants and outputs, and what a graph holds.
#include <span>

#include "core/c_api/handles.hpp"

using namespace porta::c_api;
using porta::Tensor;

namespace {

void check_index(std::size_t index, std::size_t count) {
  if (index >= count) invalid("index " + std::to_string(index) + " is past the graph's " + std::to_string(count));
}

}  // namespace

extern "C" {

porta_status porta_graph_create(porta_graph** out) {
  return guard([&] {
    porta_graph*& result = out_ref(out, "out");  // first: a NULL out must not leak the graph
    result = new porta_graph{};
  });
}

void porta_graph_free(porta_graph* graph) { free_handle(graph); }

porta_status porta_graph_input(porta_graph* graph, const char* name, const int64_t* shape, size_t rank,
                               porta_dtype dtype, const int64_t* strides, porta_tensor* out) {
  return guard([&] {
    porta::Shape s = to_shape(shape, rank, "shape");
    porta::Shape st = strides == nullptr ? porta::Shape{} : to_shape(strides, rank, "strides");
    porta_tensor& result = out_ref(out, "out");  // first: a NULL out must leave the graph as it was
    result = {get(graph, "graph").input(text(name, "name"), std::move(s), dtype_of(dtype),
                                                     std::move(st)).id};
  });
}

porta_status porta_graph_constant(porta_graph* graph, const char* name, const int64_t* shape, size_t rank,
                                  porta_dtype dtype, const void* data, size_t bytes, porta_tensor* out) {
  return guard([&] {
    if (data == nullptr && bytes > 0) invalid("data is NULL");
    const auto* p = static_cast<const std::byte*>(data);
    porta_tensor& result = out_ref(out, "out");  // first: a NULL out must leave the graph as it was
    result = {get(graph, "graph").constant_bytes(text(name, "name"), to_shape(shape, rank, "shape"),
                                                              dtype_of(dtype), std::span(p, bytes)).id};
  });
}

porta_status porta_graph_constant_f32(porta_graph* graph, const char* name, const int64_t* shape, size_t rank,
                                      porta_dtype dtype, const float* values, size_t count, porta_tensor* out) {
  return guard([&] {
    if (values == nullptr && count > 0) invalid("values is NULL");
    porta_tensor& result = out_ref(out, "out");  // first: a NULL out must leave the graph as it was
    result = {get(graph, "graph").constant(text(name, "name"), to_shape(shape, rank, "shape"),
                                                        std::span(values, count), dtype_of(dtype)).id};
  });
}

porta_status porta_graph_output(porta_graph* graph, const char* name, porta_tensor tensor) {
  return guard([&] { get(graph, "graph").output(text(name, "name"), tensor_of(tensor)); });
}

porta_status porta_graph_tensor_desc(const porta_graph* graph, porta_tensor tensor, porta_tensor_desc* out) {
  return guard([&] { out_ref(out, "out") = to_c(get(graph, "graph").desc(tensor_of(tensor))); });
}

porta_status porta_graph_input_count(const porta_graph* graph, size_t* count) {
  return guard([&] { out_ref(count, "count") = get(graph, "graph").inputs().size(); });
}

porta_status porta_graph_output_count(const porta_graph* graph, size_t* count) {
  return guard([&] { out_ref(count, "count") = get(graph, "graph").outputs().size(); });
}

porta_status porta_graph_input_at(const porta_graph* graph, size_t index, const char** name, porta_tensor* tensor) {
  return guard([&] {
    const porta::Graph& g = get(graph, "graph");
    const std::vector<Tensor> inputs = g.inputs();
    check_index(index, inputs.size());
    if (name != nullptr) *name = g.info(inputs[index]).name.c_str();
    if (tensor != nullptr) *tensor = {inputs[index].id};
  });
}

porta_status porta_graph_output_at(const porta_graph* graph, size_t index, const char** name,
                                   porta_tensor* tensor) {
  return guard([&] {
    const auto& outputs = get(graph, "graph").outputs();
    check_index(index, outputs.size());
    if (name != nullptr) *name = outputs[index].first.c_str();
    if (tensor != nullptr) *tensor = {outputs[index].second.id};
  });
}

}  // extern "C"
