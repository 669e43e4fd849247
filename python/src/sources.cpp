// porta.onnx and porta.models: graphs from ONNX files and from the model catalog.
#include <pybind11/stl.h>

#include <map>
#include <span>
#include <string>

#include "bindings.hpp"
#include "porta/onnx.hpp"

namespace porta::python {

namespace {

using namespace pybind11::literals;

onnx::LoadOptions load_options(std::int64_t batch, const std::map<std::string, Shape>& input_shapes) {
  onnx::LoadOptions o;
  o.batch = batch;
  for (const auto& [name, shape] : input_shapes) o.input_shapes.emplace(name, shape);
  return o;
}

}  // namespace

void bind_sources(py::module_& m) {
  py::module_ onnx_module = m.def_submodule("onnx", "ONNX import (the ops of torchvision's CNN exports).");
  onnx_module.def("load", [](const std::string& path, std::int64_t batch,
                             const std::map<std::string, Shape>& input_shapes) {
    return onnx::load(path, load_options(batch, input_shapes));
  }, "path"_a, "batch"_a = 1, "input_shapes"_a = std::map<std::string, Shape>{},
     "A Graph from a .onnx file; batch fills a symbolic leading dimension, input_shapes replace inputs' shapes.");
  onnx_module.def("load_bytes", [](const py::bytes& data, std::int64_t batch,
                                   const std::map<std::string, Shape>& input_shapes) {
    const std::string_view view = data;
    return onnx::load_bytes(std::as_bytes(std::span(view.data(), view.size())), load_options(batch, input_shapes));
  }, "data"_a, "batch"_a = 1, "input_shapes"_a = std::map<std::string, Shape>{}, "A Graph from a model's bytes.");

  py::module_ models_module = m.def_submodule(
      "models", "Whole networks as torchvision defines them, with seeded random weights: for speed and memory.");
  models_module.def("build", [](const std::string& name, std::int64_t batch, std::int64_t resolution,
                                std::int64_t classes, const std::string& dtype, std::uint64_t seed, std::int64_t seq,
                                std::int64_t layers, bool training) {
    return models::build(name, {.batch = batch, .resolution = resolution, .classes = classes,
                                .dtype = parse_dtype(dtype), .seed = seed, .seq = seq, .layers = layers,
                                .training = training});
  }, "name"_a, "batch"_a = 1, "resolution"_a = 0, "classes"_a = 1000, "dtype"_a = "f32", "seed"_a = 1, "seq"_a = 0,
     "layers"_a = 0, "training"_a = false,
     "A network of porta.models.available() (include/porta/models.hpp): 'resnet50', 'efficientnet-b0' ... "
     "'efficientnet-b7', 'mobilenet-v2' (input 'input', output 'logits'), 'bert-base', 'bert-large' (seq: "
     "sequence length, 0 = 128) and 'vit-b16'; layers: the transformers' encoder layers, 0 = their own; training: "
     "the dropout and stochastic depth torchvision trains EfficientNet and MobileNet-V2 with.");
  models_module.def("available", [] {
    py::dict result;
    for (const models::ModelInfo& info : models::available()) result[py::str(info.name)] = info.resolution;
    return result;
  }, "{name: native resolution} of every model build knows.");
}

}  // namespace porta::python
