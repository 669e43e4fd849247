// porta.devices, porta.Device and porta.Executable: compile with options as keywords, run with numpy
// arrays as keywords, outputs as a dict of arrays. The GIL is released while porta compiles and runs.
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"

namespace porta::python {

namespace {

using namespace pybind11::literals;

// An executable with the names of its graph's inputs and outputs, which run() needs.
struct PyExecutable {
  Executable exe;
  std::vector<std::string> inputs, outputs;
};

void set_input(PyExecutable& e, const std::string& name, const py::handle& value) {
  const TensorDesc& desc = e.exe.input_desc(name);
  const Storage s = storage_of(value, desc.dtype, "input '" + name + "'");
  if (s.shape() != desc.shape)
    throw Error(ErrorCode::ShapeMismatch,
                "input '" + name + "' is " + to_string(s.shape()) + ", expected " + to_string(desc.shape));
  e.exe.set_input_bytes(name, s.bytes());  // read in place from the array's own buffer
}

py::dict outputs_of(const PyExecutable& e) {
  py::dict result;
  for (const std::string& name : e.outputs)
    result[py::str(name)] = array_of(e.exe.output_bytes(name), e.exe.output_desc(name));
  return result;
}

CompileOptions compile_options(bool optimize, bool allow_tf32, const std::string& impl, bool profile,
                               bool poison_memory) {
  return {.impl = parse_impl(impl), .allow_tf32 = allow_tf32, .poison_memory = poison_memory, .profile = profile,
          .optimize = optimize};
}

void bind_device_info(py::module_& m) {
  py::class_<DeviceInfo>(m, "DeviceInfo", "What a device is: spec opens it again, memory in bytes.")
      .def_readonly("spec", &DeviceInfo::spec)
      .def_readonly("backend", &DeviceInfo::backend)
      .def_readonly("name", &DeviceInfo::name)
      .def_readonly("vendor", &DeviceInfo::vendor)
      .def_readonly("arch", &DeviceInfo::arch)
      .def_readonly("driver", &DeviceInfo::driver)
      .def_readonly("compute_units", &DeviceInfo::compute_units)
      .def_readonly("threads", &DeviceInfo::threads)
      .def_readonly("subgroup_size", &DeviceInfo::subgroup_size)
      .def_readonly("memory_total", &DeviceInfo::memory_total)
      .def_readonly("memory_free", &DeviceInfo::memory_free)
      .def_readonly("fp16", &DeviceInfo::fp16)
      .def_readonly("bf16", &DeviceInfo::bf16)
      .def_readonly("matrix_units", &DeviceInfo::matrix_units)
      .def_readonly("tf32", &DeviceInfo::tf32)
      .def("__repr__", [](const DeviceInfo& d) { return "porta.DeviceInfo(" + d.spec + ", " + d.name + ")"; });
  m.def("devices", &devices, "Every usable device of this build (ref excluded).");
}

void bind_device(py::module_& m) {
  py::class_<Device>(m, "Device", "A device opened by its spec: 'ref', 'cpu', 'cpu:threads=1', 'opencl:0', 'cuda:0'.")
      .def(py::init([](const std::string& spec) { return Device::open(spec); }), "spec"_a = "cpu")
      .def_property_readonly("info", &Device::info)
      .def(
          "compile",
          [](const Device& d, const Graph& g, bool optimize, bool allow_tf32, const std::string& impl, bool profile,
             bool poison_memory) {
            const CompileOptions o = compile_options(optimize, allow_tf32, impl, profile, poison_memory);
            PyExecutable e{.exe = [&] {
              py::gil_scoped_release unlocked;
              return d.compile(g, o);
            }(), .inputs = input_names(g), .outputs = output_names(g)};
            return e;
          },
          "graph"_a, "optimize"_a = true, "allow_tf32"_a = false, "impl"_a = "native", "profile"_a = false,
          "poison_memory"_a = false, "Compiles `graph` for this device (the graph may change or go after).")
      .def(
          "estimate_memory",
          [](const Device& d, const Graph& g, bool optimize, bool allow_tf32, const std::string& impl) {
            const MemoryEstimate m = d.estimate_memory(g, compile_options(optimize, allow_tf32, impl, false, false));
            return py::dict("arena_bytes"_a = m.arena_bytes, "constant_bytes"_a = m.constant_bytes,
                            "naive_arena_bytes"_a = m.naive_arena_bytes, "peak_bytes"_a = m.peak_bytes());
          },
          "graph"_a, "optimize"_a = true, "allow_tf32"_a = false, "impl"_a = "native",
          "The memory compile would plan, in bytes, before anything is allocated.")
      .def("measure_fma_gflops", &Device::measure_fma_gflops, py::call_guard<py::gil_scoped_release>(),
           "The f32 FMA ceiling in GFLOP/s (a fraction of a second).")
      .def("measure_copy_gbs", &Device::measure_copy_gbs, py::call_guard<py::gil_scoped_release>(),
           "The device's copy bandwidth in GB/s, bytes read and written (a fraction of a second).")
      .def("__repr__", [](const Device& d) { return "porta.Device('" + d.info().spec + "')"; });
}

void bind_executable(py::module_& m) {
  py::class_<PyExecutable>(m, "Executable", "A graph compiled for one device.")
      .def("set_input", &set_input, "name"_a, "array"_a,
           "Copies an array into the input: its shape must be the input's; a C-contiguous array of the input's "
           "dtype is read in place, another float array is converted, a strided one made contiguous first.")
      .def(
          "run",
          [](PyExecutable& e, const py::kwargs& inputs) {
            for (const auto& [name, value] : inputs) set_input(e, py::cast<std::string>(name), value);
            {
              py::gil_scoped_release unlocked;
              e.exe.run();
            }
            return outputs_of(e);
          },
          "Sets the inputs given as keywords, runs and returns every output as {name: array}.")
      .def("output", [](const PyExecutable& e, const std::string& name) {
        return array_of(e.exe.output_bytes(name), e.exe.output_desc(name));
      }, "name"_a, "One output of the last run.")
      .def("variable", [](const PyExecutable& e, const std::string& name) {
        return array_of(e.exe.variable_bytes(name), e.exe.variable_desc(name));
      }, "name"_a, "A copy of a variable's current value, read from the device.")
      .def("set_variable", [](PyExecutable& e, const std::string& name, const py::handle& value) {
        const TensorDesc& desc = e.exe.variable_desc(name);
        const Storage s = storage_of(value, desc.dtype, "variable '" + name + "'");
        if (s.shape() != desc.shape)
          throw Error(ErrorCode::ShapeMismatch,
                      "variable '" + name + "' is " + to_string(desc.shape) + ", the array " + to_string(s.shape()));
        e.exe.set_variable_bytes(name, s.bytes());
      }, "name"_a, "array"_a, "Copies an array (of the variable's shape; converted as for set_input) to the device.")
      .def_property_readonly("variables", [](const PyExecutable& e) { return e.exe.variable_names(); },
                             "The names of the graph's variables.")
      .def_readonly("inputs", &PyExecutable::inputs)
      .def_readonly("outputs", &PyExecutable::outputs)
      .def_property_readonly("last_run_time", [](const PyExecutable& e) {
        const RunTime t = e.exe.last_run_time();
        return py::make_tuple(t.seconds, std::string(to_string(t.clock)));
      }, "(seconds, clock) of the last run as its backend timed it; clock is 'device-event', 'host' or 'none'.")
      .def_property_readonly("planned_peak_bytes", [](const PyExecutable& e) { return e.exe.planned_peak_bytes(); })
      .def_property_readonly("device", [](const PyExecutable& e) { return e.exe.device(); })
      .def("node_timings", [](const PyExecutable& e) {
        py::list result;
        for (const NodeTiming& t : e.exe.node_timings())
          result.append(py::make_tuple(t.name, std::string(to_string(t.op)), t.seconds));
        return result;
      }, "[(node, op, seconds)] of the last run, with compile(profile=True).")
      .def("node_plans", [](const PyExecutable& e) {
        py::list result;
        for (const NodePlan& p : e.exe.node_plans())
          result.append(py::make_tuple(p.name, std::string(to_string(p.op)), p.plan));
        return result;
      }, "[(node, op, plan)]: what each node's kernels chose on the first run ('' where they make no plan).");
}

}  // namespace

void bind_runtime(py::module_& m) {
  bind_device_info(m);
  bind_device(m);
  bind_executable(m);
}

}  // namespace porta::python
