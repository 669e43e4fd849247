// Load-time evaluation (fold.hpp). Values are computed in int64 or double whatever their ONNX
// element type, then stored back as Literals: enough for shape arithmetic, with no kernel per type.
#include "core/onnx/fold.hpp"

#include <cmath>
#include <optional>
#include <unordered_map>

namespace porta::onnx {
namespace {

// A literal's values in a form arithmetic can use: ints (integer and bool) or floats (dtype kept).
struct Array {
  Shape dims;
  bool is_float = false;
  DType dtype = DType::f32;
  std::vector<double> f;
  std::vector<std::int64_t> i;
};

std::size_t count(const Shape& dims) { return static_cast<std::size_t>(folded_count(dims)); }

std::int64_t axis_in(std::int64_t axis, std::size_t rank, const char* what = "axis") {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r)
    invalid(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

std::int64_t product(const Shape& dims, std::size_t from, std::size_t to) {
  std::int64_t n = 1;
  for (std::size_t d = from; d < to; ++d) n *= dims[d];
  return n;
}

// Calls f(multi-index) for every element of `dims`, in row-major order.
template <class F>
void for_each_index(const Shape& dims, F f) {
  const std::size_t n = count(dims);
  std::vector<std::int64_t> idx(dims.size(), 0);
  for (std::size_t k = 0; k < n; ++k) {
    f(idx);
    for (std::size_t d = dims.size(); d-- > 0;) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

// `from`'s kind and dtype, of `dims`, each element read from `from` at the index `src` gives.
Array take(const Array& from, Shape dims, const std::vector<std::size_t>& src) {
  Array out{std::move(dims), from.is_float, from.dtype, {}, {}};
  for (const std::size_t s : src) {
    if (from.is_float)
      out.f.push_back(from.f[s]);
    else
      out.i.push_back(from.i[s]);
  }
  return out;
}

Shape broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (std::size_t k = 1; k <= out.size(); ++k) {
    const std::int64_t da = k <= a.size() ? a[a.size() - k] : 1, db = k <= b.size() ? b[b.size() - k] : 1;
    if (da != db && da != 1 && db != 1) invalid("dims " + to_string(a) + " and " + to_string(b) + " do not broadcast");
    out[out.size() - k] = da == 1 ? db : da;
  }
  return out;
}

// For each element of `to`, the index of the element of `from` (broadcast to `to`) it reads.
std::vector<std::size_t> broadcast_index(const Shape& from, const Shape& to) {
  const std::size_t offset = to.size() - from.size();
  std::vector<std::size_t> src;
  src.reserve(count(to));
  for_each_index(to, [&](const std::vector<std::int64_t>& idx) {
    std::size_t s = 0;
    for (std::size_t d = 0; d < from.size(); ++d) s = s * from[d] + (from[d] == 1 ? 0 : idx[d + offset]);
    src.push_back(s);
  });
  return src;
}

// The inputs of one node, converted once; required ones are checked on access.
class Args {
 public:
  explicit Args(std::span<const Literal* const> literals) : literals_(literals) {
    for (const Literal* lit : literals) {
      if (!lit) {
        arrays_.emplace_back();
        continue;
      }
      Array a{lit->dims, lit->is_float, lit->dtype, {}, {}};
      if (lit->is_float) {
        const std::vector<float> v = lit->floats();
        a.f.assign(v.begin(), v.end());
      } else {
        a.i = lit->ints;
      }
      arrays_.push_back(std::move(a));
    }
  }
  std::size_t size() const { return arrays_.size(); }
  const Array* optional(std::size_t k) const { return k < arrays_.size() && arrays_[k] ? &*arrays_[k] : nullptr; }
  const Array& operator[](std::size_t k) const {
    if (!optional(k)) invalid("input " + std::to_string(k) + " is required");
    return *arrays_[k];
  }
  const Literal* literal(std::size_t k) const { return k < literals_.size() ? literals_[k] : nullptr; }
  // An integer input read as a list, or `fallback` when it is omitted.
  std::vector<std::int64_t> ints(std::size_t k, std::vector<std::int64_t> fallback = {}) const {
    const Array* a = optional(k);
    if (!a) return fallback;
    if (a->is_float) invalid("input " + std::to_string(k) + " must be an integer tensor");
    return a->i;
  }
  double scalar(std::size_t k) const {
    const Array& a = (*this)[k];
    if ((a.is_float ? a.f.size() : a.i.size()) != 1)
      invalid("input " + std::to_string(k) + " must hold one value, it has dims " + to_string(a.dims));
    return a.is_float ? a.f[0] : static_cast<double>(a.i[0]);
  }

 private:
  std::span<const Literal* const> literals_;
  std::vector<std::optional<Array>> arrays_;
};

using Folder = Array (*)(const Args&, const Attrs&, std::int64_t opset);

// --- elementwise ----------------------------------------------------------------------------------
template <bool Compare, class F>
Array zip(const Args& in, F f) {
  const Array &a = in[0], &b = in[1];
  if (a.is_float != b.is_float) invalid("the inputs mix float and integer element types");
  Shape dims = broadcast(a.dims, b.dims);
  const auto ia = broadcast_index(a.dims, dims), ib = broadcast_index(b.dims, dims);
  Array out{std::move(dims), a.is_float && !Compare, Compare ? DType::boolean : a.dtype, {}, {}};
  for (std::size_t k = 0; k < ia.size(); ++k) {
    if constexpr (Compare)
      out.i.push_back(a.is_float ? f(a.f[ia[k]], b.f[ib[k]]) : f(a.i[ia[k]], b.i[ib[k]]));
    else if (a.is_float)
      out.f.push_back(f(a.f[ia[k]], b.f[ib[k]]));
    else
      out.i.push_back(f(a.i[ia[k]], b.i[ib[k]]));
  }
  return out;
}
// Integer arithmetic wraps (two's complement), as ONNX runtimes' int64 does, instead of overflowing.
template <class T, class F>
T wrapping(T x, T y, F f) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(f(static_cast<std::uint64_t>(x), static_cast<std::uint64_t>(y)));
  else
    return f(x, y);
}
Array add(const Args& in, const Attrs&, std::int64_t) {
  return zip<false>(in, [](auto x, auto y) { return wrapping(x, y, [](auto p, auto q) { return p + q; }); });
}
Array sub(const Args& in, const Attrs&, std::int64_t) {
  return zip<false>(in, [](auto x, auto y) { return wrapping(x, y, [](auto p, auto q) { return p - q; }); });
}
Array mul(const Args& in, const Attrs&, std::int64_t) {
  return zip<false>(in, [](auto x, auto y) { return wrapping(x, y, [](auto p, auto q) { return p * q; }); });
}
Array div(const Args& in, const Attrs&, std::int64_t) {
  return zip<false>(in, [](auto x, auto y) {
    if constexpr (std::is_integral_v<decltype(x)>) {
      if (y == 0) invalid("integer division by zero");
      if (y == -1) return wrapping(x, y, [](auto p, auto) { return 0 - p; });  // INT64_MIN / -1 wraps
    }
    return x / y;
  });
}
// fmod 0: an integer remainder with the divisor's sign (Python's %); fmod 1: C's fmod, for floats too.
Array mod(const Args& in, const Attrs& a, std::int64_t) {
  const bool c_style = a.int64("fmod", 0) != 0;
  if (in[0].is_float && !c_style) invalid("float inputs need fmod 1");
  return zip<false>(in, [c_style](auto x, auto y) {
    if constexpr (std::is_integral_v<decltype(x)>) {
      if (y == 0) invalid("integer division by zero");
      if (y == -1) return decltype(x){0};  // INT64_MIN % -1 overflows in C++
      const auto r = x % y;
      return !c_style && r != 0 && (r < 0) != (y < 0) ? r + y : r;
    } else {
      return std::fmod(x, y);
    }
  });
}
Array equal(const Args& in, const Attrs&, std::int64_t) {
  return zip<true>(in, [](auto x, auto y) { return x == y; });
}
Array less(const Args& in, const Attrs&, std::int64_t) {
  return zip<true>(in, [](auto x, auto y) { return x < y; });
}
Array greater(const Args& in, const Attrs&, std::int64_t) {
  return zip<true>(in, [](auto x, auto y) { return x > y; });
}

Array logical_not(const Args& in, const Attrs&, std::int64_t) {
  Array out = in[0];
  if (out.is_float) invalid("the input must be a bool tensor");
  for (auto& v : out.i) v = v == 0;
  return out;
}

Array where(const Args& in, const Attrs&, std::int64_t) {
  const Array &c = in[0], &x = in[1], &y = in[2];
  if (c.is_float) invalid("the condition must be a bool tensor");
  if (x.is_float != y.is_float) invalid("the inputs mix float and integer element types");
  Shape dims = broadcast(broadcast(c.dims, x.dims), y.dims);
  const auto ic = broadcast_index(c.dims, dims), ix = broadcast_index(x.dims, dims), iy = broadcast_index(y.dims, dims);
  Array out{std::move(dims), x.is_float, x.dtype, {}, {}};
  for (std::size_t k = 0; k < ic.size(); ++k) {
    const bool pick_x = c.i[ic[k]] != 0;
    if (x.is_float)
      out.f.push_back(pick_x ? x.f[ix[k]] : y.f[iy[k]]);
    else
      out.i.push_back(pick_x ? x.i[ix[k]] : y.i[iy[k]]);
  }
  return out;
}

Array cast(const Args& in, const Attrs& a, std::int64_t) {
  Array out = in[0];
  const auto to = static_cast<ElemType>(a.int64("to", 0));
  switch (to) {
    case ElemType::Float:
    case ElemType::Double:
    case ElemType::Float16:
    case ElemType::BFloat16:
      out.dtype = to == ElemType::Float16 ? DType::f16 : to == ElemType::BFloat16 ? DType::bf16 : DType::f32;
      if (!out.is_float) out.f.assign(out.i.begin(), out.i.end());
      out.is_float = true;
      out.i.clear();
      return out;
    case ElemType::String:
    case ElemType::Undefined: unsupported("'to' is " + elem_type_name(static_cast<std::int32_t>(to)));
    default: break;
  }
  if (out.is_float) {
    for (const double v : out.f) {
      if (!(std::abs(v) < 9.2e18)) invalid("casting " + std::to_string(v) + " to an integer overflows");
      out.i.push_back(to == ElemType::Bool ? v != 0.0 : static_cast<std::int64_t>(v));
    }
  } else if (to == ElemType::Bool) {
    for (auto& v : out.i) v = v != 0;
  }
  out.dtype = to == ElemType::Bool ? DType::boolean : to == ElemType::Int32 ? DType::i32 : DType::i64;
  out.is_float = false;
  out.f.clear();
  return out;
}

// --- movement -------------------------------------------------------------------------------------
Array gather(const Args& in, const Attrs& a, std::int64_t) {
  const Array& data = in[0];
  const std::vector<std::int64_t> indices = in.ints(1);
  const std::size_t axis = axis_in(a.int64("axis", 0), data.dims.size());
  const std::int64_t n = data.dims[axis], inner = product(data.dims, axis + 1, data.dims.size());
  Shape dims(data.dims.begin(), data.dims.begin() + axis);
  dims.insert(dims.end(), in[1].dims.begin(), in[1].dims.end());
  dims.insert(dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  count(dims);
  std::vector<std::size_t> src;
  for (std::int64_t o = 0; o < product(data.dims, 0, axis); ++o) {
    for (std::int64_t j : indices) {
      if (j < -n || j >= n)
        invalid("index " + std::to_string(j) + " is out of range for a dimension of " + std::to_string(n));
      j = j < 0 ? j + n : j;
      for (std::int64_t r = 0; r < inner; ++r) src.push_back(static_cast<std::size_t>((o * n + j) * inner + r));
    }
  }
  return take(data, std::move(dims), src);
}

Array slice(const Args& in, const Attrs& a, std::int64_t opset) {
  const Array& data = in[0];
  const std::size_t rank = data.dims.size();
  const bool attrs = opset < 10;
  const auto starts = attrs ? a.ints("starts", {}) : in.ints(1), ends = attrs ? a.ints("ends", {}) : in.ints(2);
  std::vector<std::int64_t> axes = attrs ? a.ints("axes", {}) : in.ints(3),
                            steps = attrs ? std::vector<std::int64_t>{} : in.ints(4);
  if (axes.empty())
    for (std::size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<std::int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    invalid("starts, ends, axes and steps must have the same length");
  std::vector<std::int64_t> start(rank, 0), step(rank, 1);
  Shape dims = data.dims;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::size_t d = axis_in(axes[k], rank);
    const std::int64_t dim = data.dims[d];
    std::int64_t s = steps[k];
    if (s == 0) invalid("a step is 0");
    s = std::clamp<std::int64_t>(s, -dim - 1, dim + 1);  // a longer step takes the same one element
    std::int64_t b = starts[k] < 0 ? starts[k] + dim : starts[k], e = ends[k] < 0 ? ends[k] + dim : ends[k];
    b = s > 0 ? std::clamp<std::int64_t>(b, 0, dim) : std::clamp<std::int64_t>(b, 0, dim - 1);
    e = s > 0 ? std::clamp<std::int64_t>(e, 0, dim) : std::clamp<std::int64_t>(e, -1, dim - 1);
    start[d] = b;
    step[d] = s;
    dims[d] = s > 0 ? std::max<std::int64_t>(0, (e - b + s - 1) / s) : std::max<std::int64_t>(0, (b - e - s - 1) / -s);
  }
  std::vector<std::size_t> src;
  for_each_index(dims, [&](const std::vector<std::int64_t>& idx) {
    std::int64_t s = 0;
    for (std::size_t d = 0; d < rank; ++d) s = s * data.dims[d] + start[d] + idx[d] * step[d];
    src.push_back(static_cast<std::size_t>(s));
  });
  return take(data, std::move(dims), src);
}

Array concat(const Args& in, const Attrs& a, std::int64_t) {
  if (!a.find("axis", AttrType::Int)) invalid("attribute 'axis' is required");
  const Array& first = in[0];
  const std::size_t axis = axis_in(a.int64("axis", 0), first.dims.size());
  Shape dims = first.dims, others = first.dims;  // `others`: the dims off the axis, which all inputs share
  dims[axis] = others[axis] = 0;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const Array& x = in[k];
    Shape same = x.dims;
    if (same.size() == dims.size()) same[axis] = 0;
    if (same != others || x.is_float != first.is_float)
      invalid("input " + std::to_string(k) + " of dims " + to_string(x.dims) + " does not concatenate with " +
              to_string(first.dims) + " on axis " + std::to_string(axis));
    dims[axis] += x.dims[axis];
  }
  Array out{dims, first.is_float, first.dtype, {}, {}};
  count(dims);
  for (std::int64_t o = 0; o < product(dims, 0, axis); ++o) {
    for (std::size_t k = 0; k < in.size(); ++k) {
      const Array& x = in[k];
      const std::int64_t chunk = product(x.dims, axis, x.dims.size());
      const auto begin = static_cast<std::size_t>(o * chunk), end = begin + static_cast<std::size_t>(chunk);
      if (x.is_float)
        out.f.insert(out.f.end(), x.f.begin() + begin, x.f.begin() + end);
      else
        out.i.insert(out.i.end(), x.i.begin() + begin, x.i.begin() + end);
    }
  }
  return out;
}

Array with_dims(Array x, Shape dims) {
  x.dims = std::move(dims);
  return x;
}
Array squeeze(const Args& in, const Attrs& a, std::int64_t opset) {
  return with_dims(in[0], squeezed(in[0].dims, axes(a, in.literal(1), opset, 13)));
}
Array unsqueeze(const Args& in, const Attrs& a, std::int64_t opset) {
  return with_dims(in[0], unsqueezed(in[0].dims, axes(a, in.literal(1), opset, 13)));
}
Array reshape(const Args& in, const Attrs& a, std::int64_t) {
  const Array& x = in[0];
  std::vector<std::int64_t> shape = in.ints(1);
  std::int64_t known = 1, infer = -1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0 && a.int64("allowzero", 0) == 0) {
      if (d >= x.dims.size())
        invalid("shape " + to_string(Shape(shape)) + " copies a dimension input " + to_string(x.dims) + " lacks");
      shape[d] = x.dims[d];
    }
    if (shape[d] == -1 && infer < 0)
      infer = static_cast<std::int64_t>(d);
    else if (shape[d] < 0 || __builtin_mul_overflow(known, shape[d], &known))
      invalid("shape " + to_string(Shape(shape)) + " is not a valid Reshape target");
  }
  const auto n = static_cast<std::int64_t>(count(x.dims));
  if (infer >= 0 && known > 0 && n % known == 0) shape[infer] = n / known;
  if (static_cast<std::int64_t>(count(Shape(shape))) != n)
    invalid("input " + to_string(x.dims) + " cannot be reshaped to " + to_string(Shape(shape)));
  return with_dims(x, Shape(shape));
}
Array expand(const Args& in, const Attrs&, std::int64_t) {
  const Array& x = in[0];
  const std::vector<std::int64_t> shape = in.ints(1);
  Shape dims = broadcast(x.dims, Shape(shape));
  return take(x, dims, broadcast_index(x.dims, dims));
}

// data with the slices that `indices` ([..., k], each row an index into data's first k dims) name
// replaced by (or combined with) those of `updates`.
Array scatter_nd(const Args& in, const Attrs& a, std::int64_t) {
  const Array &data = in[0], &updates = in[2];
  const std::vector<std::int64_t> indices = in.ints(1);
  const Shape& id = in[1].dims;
  const std::string reduction = a.string("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul")
    unsupported("reduction '" + reduction + "' is not supported (none, add, mul)");
  if (id.empty() || id.back() < 1 || static_cast<std::size_t>(id.back()) > data.dims.size())
    invalid("indices of dims " + to_string(id) + " do not index data of dims " + to_string(data.dims));
  const auto k = static_cast<std::size_t>(id.back());
  const std::int64_t slice = product(data.dims, k, data.dims.size()), rows = product(id, 0, id.size() - 1);
  if (updates.is_float != data.is_float || product(updates.dims, 0, updates.dims.size()) != rows * slice)
    invalid("updates of dims " + to_string(updates.dims) + " do not fit indices " + to_string(id));
  Array out = data;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < k; ++d) {
      const std::int64_t n = data.dims[d], j = indices[static_cast<std::size_t>(r) * k + d];
      if (j < -n || j >= n)
        invalid("index " + std::to_string(j) + " is out of range for a dimension of " + std::to_string(n));
      offset = offset * n + (j < 0 ? j + n : j);
    }
    for (std::int64_t e = 0; e < slice; ++e) {
      const auto to = static_cast<std::size_t>(offset * slice + e), from = static_cast<std::size_t>(r * slice + e);
      const auto apply = [&, how = reduction[0]](auto& dst, const auto& src) {  // 'n'one, 'a'dd or 'm'ul
        const auto x = dst[to], y = src[from];
        dst[to] = how == 'a'   ? wrapping(x, y, [](auto p, auto q) { return p + q; })
                  : how == 'm' ? wrapping(x, y, [](auto p, auto q) { return p * q; })
                               : y;
      };
      if (out.is_float)
        apply(out.f, updates.f);
      else
        apply(out.i, updates.i);
    }
  }
  return out;
}

// --- generators -----------------------------------------------------------------------------------
Array constant_of_shape(const Args& in, const Attrs& a, std::int64_t) {
  Shape dims(in.ints(0));
  const std::size_t n = count(dims);
  Array out{dims, true, DType::f32, {}, {}};
  if (const Attribute* t = a.find("value", AttrType::Tensor)) {
    if (!t->t) invalid("attribute 'value' holds no tensor");
    const Literal value = decode_literal(*t->t, "ConstantOfShape value");
    if (value.numel() != 1) invalid("attribute 'value' must hold one element, it has dims " + to_string(value.dims));
    out.is_float = value.is_float;
    out.dtype = value.dtype;
    if (!value.is_float)
      out.i.assign(n, value.ints[0]);
    else
      out.f.assign(n, value.floats()[0]);
    return out;
  }
  out.f.assign(n, 0.0);
  return out;
}

Array range(const Args& in, const Attrs&, std::int64_t) {
  const Array& first = in[0];
  const double start = in.scalar(0), limit = in.scalar(1), delta = in.scalar(2);
  if (delta == 0) invalid("delta is 0");
  const double steps = std::max(0.0, std::ceil((limit - start) / delta));
  if (!(steps <= static_cast<double>(max_folded_elements)))
    unsupported("Range would make " + std::to_string(steps) + " elements; porta folds up to 2^22 at load time");
  const auto n = static_cast<std::int64_t>(steps);
  Array out{Shape{n}, first.is_float, first.dtype, {}, {}};
  for (std::int64_t k = 0; k < n; ++k) {
    if (first.is_float)
      out.f.push_back(start + static_cast<double>(k) * delta);
    else
      out.i.push_back(wrapping(first.i[0], k, [&](auto p, auto q) { return p + q * std::uint64_t(in[2].i[0]); }));
  }
  return out;
}

const std::unordered_map<std::string_view, Folder>& folders() {
  static const std::unordered_map<std::string_view, Folder> table{
      {"Add", &add},
      {"Sub", &sub},
      {"Mul", &mul},
      {"Div", &div},
      {"Mod", &mod},
      {"Not", &logical_not},
      {"ScatterND", &scatter_nd},
      {"Equal", &equal},
      {"Less", &less},
      {"Greater", &greater},
      {"Where", &where},
      {"Cast", &cast},
      {"Gather", &gather},
      {"Slice", &slice},
      {"Concat", &concat},
      {"Squeeze", &squeeze},
      {"Unsqueeze", &unsqueeze},
      {"Reshape", &reshape},
      {"Expand", &expand},
      {"ConstantOfShape", &constant_of_shape},
      {"Range", &range},
  };
  return table;
}

}  // namespace

std::int64_t folded_count(const Shape& dims) {
  std::int64_t n = 1;
  for (auto d : dims) {
    if (d < 0) invalid("dims " + to_string(dims) + " have a negative extent");
    if (__builtin_mul_overflow(n, d, &n) || n > max_folded_elements)
      unsupported("folding would make a value of dims " + to_string(dims) +
                  "; porta folds values of up to 2^22 elements at load time");
  }
  return n;
}

bool foldable(std::string_view op_type) { return folders().contains(op_type); }

Literal fold(const NodeProto& n, std::span<const Literal* const> inputs, std::int64_t opset) {
  const Args in(inputs);
  Array out = folders().at(n.op_type)(in, Attrs(n), opset);
  Literal lit;
  lit.dims = std::move(out.dims);
  lit.is_float = out.is_float;
  lit.dtype = out.dtype;
  if (!out.is_float) {
    lit.ints = std::move(out.i);
    return lit;
  }
  std::vector<std::byte> data(out.f.size() * size_of(out.dtype));
  for (std::size_t k = 0; k < out.f.size(); ++k)
    store_from_f32(data.data(), k, out.dtype, static_cast<float>(out.f[k]));
  lit.own(std::move(data));
  return lit;
}

Literal int_literal(Shape dims, std::vector<std::int64_t> values) {
  Literal lit;
  lit.dims = std::move(dims);
  lit.is_float = false;
  lit.dtype = DType::i64;
  lit.ints = std::move(values);
  return lit;
}

std::vector<std::int64_t> axes(const Attrs& a, const Literal* input, std::int64_t opset, std::int64_t since) {
  if (opset < since) return a.ints("axes", {});
  if (a.find("axes", AttrType::Ints))
    invalid("attribute 'axes' became input 1 in opset " + std::to_string(since) + " (the model's is " +
            std::to_string(opset) + ")");
  if (!input) return {};
  if (input->is_float) invalid("axes must be an integer tensor");
  return input->ints;
}

Shape squeezed(const Shape& dims, const std::vector<std::int64_t>& axes) {
  std::vector<bool> drop(dims.size(), axes.empty());
  if (axes.empty())
    for (std::size_t d = 0; d < dims.size(); ++d) drop[d] = dims[d] == 1;
  for (const std::int64_t axis : axes) {
    const std::size_t d = axis_in(axis, dims.size());
    if (dims[d] != 1)
      invalid("dimension " + std::to_string(d) + " of " + to_string(dims) + " is not 1; it cannot be squeezed");
    drop[d] = true;
  }
  Shape out;
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (!drop[d]) out.push_back(dims[d]);
  return out;
}

Shape unsqueezed(const Shape& dims, const std::vector<std::int64_t>& axes) {
  const std::size_t rank = dims.size() + axes.size();
  std::vector<bool> added(rank, false);
  for (const std::int64_t axis : axes) {
    const std::size_t d = axis_in(axis, rank);
    if (added[d]) invalid("axis " + std::to_string(axis) + " is given twice");
    added[d] = true;
  }
  Shape out;
  auto next = dims.begin();
  for (std::size_t d = 0; d < rank; ++d) out.push_back(added[d] ? 1 : *next++);
  return out;
}

}  // namespace porta::onnx
