#pragma once
// The parts of the porta module, one per file of python/src, and what they share.
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "porta/porta.hpp"

namespace porta::python {

namespace py = pybind11;

void bind_errors(py::module_& m);   // errors.cpp
void bind_graph(py::module_& m);    // graph.cpp
void bind_runtime(py::module_& m);  // runtime.cpp
void bind_sources(py::module_& m);  // sources.cpp: porta.onnx and porta.models
void bind_autodiff(py::module_& m); // autodiff.cpp: porta.autodiff

std::vector<std::string> input_names(const Graph& g);
std::vector<std::string> output_names(const Graph& g);

}  // namespace porta::python
