// porta.Error, raised for every porta::Error with its code and message, and porta.ErrorCode.
#include "bindings.hpp"

namespace porta::python {

void bind_errors(py::module_& m) {
  py::enum_<ErrorCode>(m, "ErrorCode", "What kind of failure a porta.Error is (porta::ErrorCode).")
      .value("InvalidArgument", ErrorCode::InvalidArgument)
      .value("ShapeMismatch", ErrorCode::ShapeMismatch)
      .value("DTypeMismatch", ErrorCode::DTypeMismatch)
      .value("Overflow", ErrorCode::Overflow)
      .value("NotFound", ErrorCode::NotFound)
      .value("Unsupported", ErrorCode::Unsupported)
      .value("DeviceUnavailable", ErrorCode::DeviceUnavailable)
      .value("OutOfMemory", ErrorCode::OutOfMemory)
      .value("BuildFailed", ErrorCode::BuildFailed)
      .value("IoError", ErrorCode::IoError)
      .value("Internal", ErrorCode::Internal);
  static py::exception<Error> error(m, "Error");
  error.attr("__doc__") = "A failure in porta: .code is a porta.ErrorCode, .message says what and where.";
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const Error& e) {
      py::object instance = py::reinterpret_borrow<py::object>(error)(e.what());  // the class, called
      instance.attr("code") = e.code();
      instance.attr("message") = e.what();
      PyErr_SetObject(error.ptr(), instance.ptr());
    }
  });
}

}  // namespace porta::python
