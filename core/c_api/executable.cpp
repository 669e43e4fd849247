// porta.h: an executable's inputs, outputs and variables by name, its run and what it measured.
#include <span>

#include "core/c_api/handles.hpp"

using namespace porta::c_api;

namespace {

// A caller's buffer must hold exactly what the tensor holds: a wrong size is an error, not a partial copy.
void check_size(std::size_t given, std::size_t expected, const char* what, const char* name) {
  if (given != expected)
    throw porta::Error(porta::ErrorCode::ShapeMismatch, std::string(what) + " for '" + name + "' is " +
                                                            std::to_string(given) + ", expected " +
                                                            std::to_string(expected));
}

template <class T>
void check_buffer(const T* data, std::size_t size) {
  if (data == nullptr && size > 0) invalid("the buffer is NULL");
}

}  // namespace

static_assert(PORTA_CLOCK_HOST == static_cast<int>(porta::RunClock::Host));

extern "C" {

void porta_executable_free(porta_executable* exe) { free_handle(exe); }

porta_status porta_executable_input_desc(const porta_executable* exe, const char* name, porta_tensor_desc* out) {
  return guard([&] { out_ref(out, "out") = to_c(get(exe, "exe").input_desc(text(name, "name"))); });
}

porta_status porta_executable_output_desc(const porta_executable* exe, const char* name, porta_tensor_desc* out) {
  return guard([&] { out_ref(out, "out") = to_c(get(exe, "exe").output_desc(text(name, "name"))); });
}

// Sizes of strided inputs are checked by the executable itself, against the strides' extent.
porta_status porta_set_input(porta_executable* exe, const char* name, const void* data, size_t bytes) {
  return guard([&] {
    check_buffer(data, bytes);
    get(exe, "exe").set_input_bytes(text(name, "name"), std::span(static_cast<const std::byte*>(data), bytes));
  });
}

porta_status porta_set_input_f32(porta_executable* exe, const char* name, const float* values, size_t count) {
  return guard([&] {
    check_buffer(values, count);
    get(exe, "exe").set_input(text(name, "name"), std::span(values, count));
  });
}

porta_status porta_run(porta_executable* exe) {
  return guard([&] { get(exe, "exe").run(); });
}

porta_status porta_get_output(const porta_executable* exe, const char* name, void* data, size_t bytes) {
  return guard([&] {
    check_buffer(data, bytes);
    const std::string n = text(name, "name");
    const porta::Executable& e = get(exe, "exe");
    check_size(bytes, e.output_desc(n).bytes(), "the buffer's size in bytes", n.c_str());
    const std::vector<std::byte> result = e.output_bytes(n);
    std::memcpy(data, result.data(), result.size());
  });
}

porta_status porta_get_output_f32(const porta_executable* exe, const char* name, float* values, size_t count) {
  return guard([&] {
    check_buffer(values, count);
    const std::string n = text(name, "name");
    const porta::Executable& e = get(exe, "exe");
    check_size(count, static_cast<std::size_t>(e.output_desc(n).numel()), "the element count", n.c_str());
    const std::vector<float> result = e.output(n);
    std::memcpy(values, result.data(), result.size() * sizeof(float));
  });
}

porta_status porta_last_run_time(const porta_executable* exe, double* seconds, porta_run_clock* clock) {
  return guard([&] {
    const porta::RunTime t = get(exe, "exe").last_run_time();
    out_ref(seconds, "seconds") = t.seconds;
    if (clock != nullptr) *clock = static_cast<porta_run_clock>(t.clock);
  });
}

porta_status porta_executable_variable_desc(const porta_executable* exe, const char* name, porta_tensor_desc* out) {
  return guard([&] { out_ref(out, "out") = to_c(get(exe, "exe").variable_desc(text(name, "name"))); });
}

porta_status porta_get_variable(const porta_executable* exe, const char* name, void* data, size_t bytes) {
  return guard([&] {
    check_buffer(data, bytes);
    const std::string n = text(name, "name");
    const porta::Executable& e = get(exe, "exe");
    check_size(bytes, e.variable_desc(n).bytes(), "the buffer's size in bytes", n.c_str());
    const std::vector<std::byte> value = e.variable_bytes(n);
    std::memcpy(data, value.data(), value.size());
  });
}

porta_status porta_set_variable(porta_executable* exe, const char* name, const void* data, size_t bytes) {
  return guard([&] {
    check_buffer(data, bytes);
    const std::string n = text(name, "name");
    porta::Executable& e = get(exe, "exe");
    check_size(bytes, e.variable_desc(n).bytes(), "the buffer's size in bytes", n.c_str());
    e.set_variable_bytes(n, std::span(static_cast<const std::byte*>(data), bytes));
  });
}

porta_status porta_planned_peak_bytes(const porta_executable* exe, uint64_t* bytes) {
  return guard([&] { out_ref(bytes, "bytes") = get(exe, "exe").planned_peak_bytes(); });
}

}  // extern "C"
