// numpy arrays in and out of porta (arrays.hpp).
#include "arrays.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace porta::python {

namespace {

// ml_dtypes.bfloat16's dtype, or None where ml_dtypes is not installed. Never destroyed: its
// destructor would run after the interpreter has gone.
const py::object& bfloat16() {
  static const py::object* dtype = [] {
    try {
      return new py::object(py::dtype::from_args(py::module_::import("ml_dtypes").attr("bfloat16")));
    } catch (const py::error_already_set&) {
      return new py::object(py::none());
    }
  }();
  return *dtype;
}

bool is_bfloat16(const py::dtype& d) { return !bfloat16().is_none() && d.equal(bfloat16()); }

bool same_text(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

template <class Enum>
Enum parse(std::string_view text, Enum last, std::string_view what) {
  std::string known;
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    const auto e = static_cast<Enum>(i);
    if (same_text(text, to_string(e))) return e;
    known += (i ? ", " : "") + std::string(to_string(e));
  }
  throw Error(ErrorCode::InvalidArgument,
              "unknown " + std::string(what) + " '" + std::string(text) + "': expected " + known);
}

std::string name_of(const py::dtype& d) { return py::str(py::handle(d)); }

[[noreturn]] void dtype_mismatch(std::string_view what, const py::dtype& given, DType wanted) {
  throw Error(ErrorCode::DTypeMismatch, std::string(what) + ": an array of " + name_of(given) +
                                            " cannot be " + std::string(to_string(wanted)) +
                                            " (floating arrays are converted to float dtypes, numbers to integer "
                                            "ones; uint16 only as bf16 bits)");
}

}  // namespace

py::dtype numpy_dtype(DType t) {
  switch (t) {
    case DType::f32: return py::dtype::of<float>();
    case DType::f16: return py::dtype("float16");
    case DType::bf16:
      return bfloat16().is_none() ? py::dtype::of<std::uint16_t>() : py::reinterpret_borrow<py::dtype>(bfloat16());
    case DType::i64: return py::dtype::of<std::int64_t>();
    case DType::i32: return py::dtype::of<std::int32_t>();
    case DType::boolean: return py::dtype::of<bool>();
  }
  throw Error(ErrorCode::Internal, "unknown dtype");
}

DType dtype_of_array(const py::array& a, const std::string& requested) {
  if (!requested.empty()) return parse_dtype(requested);
  const py::dtype d = a.dtype();
  if (d.equal(py::dtype::of<float>())) return DType::f32;
  if (d.equal(py::dtype("float16"))) return DType::f16;
  if (is_bfloat16(d)) return DType::bf16;
  if (d.equal(py::dtype::of<std::int64_t>())) return DType::i64;
  if (d.equal(py::dtype::of<std::int32_t>())) return DType::i32;
  if (d.equal(py::dtype::of<bool>())) return DType::boolean;
  if (d.kind() == 'f') return DType::f32;  // float64 and others: converted to f32
  throw Error(ErrorCode::DTypeMismatch, "an array of " + name_of(d) +
                                            " needs dtype= (uint16 holds bf16 bits: dtype='bf16')");
}

Storage storage_of(const py::handle& value, DType dtype, std::string_view what) {
  py::array a = py::array::ensure(value);
  if (!a) throw Error(ErrorCode::InvalidArgument, std::string(what) + " is not an array");
  const py::dtype given = a.dtype();
  const py::dtype wanted = numpy_dtype(dtype);
  const bool bits = dtype == DType::bf16 && given.equal(py::dtype::of<std::uint16_t>());
  if (!given.equal(wanted) && !bits && !is_float(dtype)) {
    // Integer and bool storage: numpy converts any number (floats truncated toward zero, as a cast).
    const std::string_view numeric = "biuf";
    if (numeric.find(given.kind()) == std::string_view::npos) dtype_mismatch(what, given, dtype);
    a = py::array(a.attr("astype")(wanted));
  } else if (!given.equal(wanted) && !bits) {
    if (given.kind() != 'f' && !is_bfloat16(given)) dtype_mismatch(what, given, dtype);
    // Through float32: numpy converts float64 to float16 directly, bfloat16 only from float32.
    a = py::array(py::array(a.attr("astype")(py::dtype::of<float>())).attr("astype")(wanted));
  }
  if (!(a.flags() & py::array::c_style)) a = py::array(py::module_::import("numpy").attr("ascontiguousarray")(a));
  return Storage{a};
}

std::span<const std::byte> Storage::bytes() const {
  return {static_cast<const std::byte*>(array.data()), static_cast<std::size_t>(array.nbytes())};
}

Shape Storage::shape() const { return Shape(array.shape(), array.shape() + array.ndim()); }

py::array array_of(const std::vector<std::byte>& bytes, const TensorDesc& desc) {
  py::array a(numpy_dtype(desc.dtype), std::vector<py::ssize_t>(desc.shape.begin(), desc.shape.end()));
  std::memcpy(a.mutable_data(), bytes.data(), bytes.size());
  return a;
}

Activation parse_activation(std::string_view text) { return parse(text, Activation::Gelu, "activation"); }
Layout parse_layout(std::string_view text) { return parse(text, Layout::NHWC, "layout"); }
Reduction parse_reduction(std::string_view text) { return parse(text, Reduction::Min, "reduction"); }
Impl parse_impl(std::string_view text) { return parse(text, Impl::Vendor, "impl"); }
PadMode parse_pad_mode(std::string_view text) { return parse(text, PadMode::Edge, "pad mode"); }

}  // namespace porta::python
