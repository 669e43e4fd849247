// The extension module porta._porta, which python/porta/__init__.py re-exports.
#include "bindings.hpp"

PYBIND11_MODULE(_porta, m) {
  m.doc() = "porta: build an op graph once, compile it for any device, run it; numpy arrays in and out.";
  porta::python::bind_errors(m);
  porta::python::bind_graph(m);
  porta::python::bind_runtime(m);
  porta::python::bind_sources(m);
  porta::python::bind_autodiff(m);
}
