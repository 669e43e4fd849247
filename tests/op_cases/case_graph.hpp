#pragma once
// Internal to the case registry: a small helper that builds one case's graph with seeded constants,
// and the registration helper each op family uses.
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "op_cases/op_cases.hpp"
#include "op_cases/verify.hpp"

namespace porta::cases::detail {

// An NCHW activation shape as `layout` stores it.
inline Shape stored(Layout layout, const Shape& nchw) {
  return layout == Layout::NHWC ? Shape{nchw[0], nchw[2], nchw[3], nchw[1]} : nchw;
}

// Inputs are named x0, x1, ... (the runner fills them with seeded values in [-1, 1)); constants
// are w0, w1, ... drawn here from the case seed, so a weight never depends on the device.
// Integer and bool cases would see only zeros in [-1, 1): their values span [-8, 8) instead, and a
// bool is true for about half of them.
class CaseGraph {
 public:
  CaseGraph(std::uint64_t seed, DType dtype) : dtype(dtype), seed_(seed) {}

  Tensor input(Shape shape, Shape strides = {}) {
    return is_float(dtype) ? input_as(dtype, std::move(shape), std::move(strides))
                           : spread_input(dtype, std::move(shape), 8.0f, std::move(strides));
  }
  Tensor input_as(DType t, Shape shape, Shape strides = {}) {
    return g.input(numbered('x', inputs_++), std::move(shape), t, std::move(strides));
  }
  // An input of dtype t spanning [-scale, scale) (a power of two: exact in every dtype). An integer
  // one is an f32 input scaled and cast (truncated toward zero); a bool one is that input > 0.
  Tensor spread_input(DType t, Shape shape, float scale, Shape strides = {}) {
    const DType stored = is_float(t) ? t : DType::f32;
    const Tensor x = input_as(stored, std::move(shape), std::move(strides));
    if (t == DType::boolean) return g.greater(x, constant_of(stored, 0.0f));
    const Tensor wide = scale == 1.0f ? x : g.mul(x, constant_of(stored, scale));
    return is_float(t) ? wide : g.cast(wide, t);
  }
  // Seeded uniform values in [lo, hi) (times 8 for an integer case; bool: those > 0).
  Tensor weights(const Shape& shape, float lo = -1.0f, float hi = 1.0f) {
    std::vector<float> v = random_values(count(shape), next_seed(), lo, hi);
    if (!is_float(dtype))
      for (float& x : v) x = dtype == DType::boolean ? static_cast<float>(x > 0.0f) : 8.0f * x;
    return g.constant(next_name(), shape, v, dtype);
  }
  // Seeded indices of dtype t in [-extent, extent) (negative ones count from the end), or in [0, extent)
  // where not `from_end` (class labels).
  Tensor indices(const Shape& shape, std::int64_t extent, DType t = DType::i64, bool from_end = true) {
    std::vector<float> v = random_values(count(shape), next_seed(), 0.0f, 1.0f);
    const float lowest = from_end ? -static_cast<float>(extent) : 0.0f;
    for (float& x : v) x = lowest + std::floor(x * (static_cast<float>(extent) - lowest));
    return g.constant(next_name(), shape, v, t);
  }
  Tensor constant_of(DType t, float value) {
    const float v[] = {value};
    return g.constant(next_name(), {1}, v, t);
  }
  // Seeded values r in [0, 1) made f(i, r), i the element's index: structured constants (masks)
  // that still differ from seed to seed.
  template <class F>
  Tensor weights_with(const Shape& shape, F f) {
    std::vector<float> v = random_values(count(shape), next_seed(), 0.0f, 1.0f);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = f(static_cast<std::int64_t>(i), v[i]);
    return g.constant(next_name(), shape, v, dtype);
  }
  // Values in +-[0.5, 1.5): safe denominators and variances.
  Tensor away_from_zero(const Shape& shape, bool positive = false) {
    std::vector<float> v = random_values(count(shape), next_seed(), -1.0f, 1.0f);
    for (float& x : v) x = x < 0.0f && !positive ? x - 0.5f : std::abs(x) + 0.5f;
    return g.constant(next_name(), shape, v, dtype);
  }
  Tensor scalar(float value) {
    const float v[] = {value};
    return g.constant(next_name(), {1}, v, dtype);
  }
  // x scaled by an exactly representable factor, to widen the [-1, 1) input range.
  Tensor scaled(Tensor x, float factor) { return g.mul(x, scalar(factor)); }

  Graph g;
  DType dtype;

 private:
  static std::size_t count(const Shape& shape) {
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    return n;
  }
  std::uint64_t next_seed() { return seed_ * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull * ++constants_; }
  std::string next_name() { return numbered('w', names_++); }
  // Not "x" + std::to_string(n): GCC 12 warns falsely (-Wrestrict) about that expression.
  static std::string numbered(char prefix, std::uint64_t n) {
    std::string name(1, prefix);
    name += std::to_string(n);
    return name;
  }

  std::uint64_t seed_;
  std::uint64_t inputs_ = 0;
  std::uint64_t constants_ = 0;  // seeds drawn
  std::uint64_t names_ = 0;      // constants named
};

using CaseBody = std::function<Tensor(CaseGraph&)>;

// Registers "<op>/<variant>/<dtype>"; the body returns the tensor that becomes output "y".
inline void add_case(std::vector<OpCase>& list, OpKind op, const std::string& variant, DType dtype, CaseBody body) {
  list.push_back({std::string(to_string(op)) + "/" + variant + "/" + std::string(to_string(dtype)), op, dtype,
                  [dtype, body = std::move(body)](std::uint64_t seed) {
                    CaseGraph cg(seed, dtype);
                    const Tensor y = body(cg);
                    cg.g.output("y", y);
                    return std::move(cg.g);
                  }});
}

// A pooling window over an NCHW input (cases_layout.cpp), shared by the pools and their gradients.
struct PoolCase {
  std::string variant;
  Shape x;
  Pool2dParams p;
};
// Valid for max and average pooling: padding below the dilated window, and no ceil_mode window
// that would miss the input entirely.
std::vector<PoolCase> pool_cases();

// One family of cases per op group, each for one dtype.
void add_matmul_cases(std::vector<OpCase>& list, DType dtype);
void add_gemm_cases(std::vector<OpCase>& list, DType dtype);
void add_conv2d_cases(std::vector<OpCase>& list, DType dtype);
void add_binary_cases(std::vector<OpCase>& list, DType dtype);
void add_unary_cases(std::vector<OpCase>& list, DType dtype);
void add_batchnorm_cases(std::vector<OpCase>& list, DType dtype);
void add_cast_cases(std::vector<OpCase>& list, DType dtype);
void add_pool_cases(std::vector<OpCase>& list, DType dtype);
void add_softmax_cases(std::vector<OpCase>& list, DType dtype);
void add_shape_cases(std::vector<OpCase>& list, DType dtype);
void add_reduce_cases(std::vector<OpCase>& list, DType dtype);
void add_norm_cases(std::vector<OpCase>& list, DType dtype);
void add_slice_pad_cases(std::vector<OpCase>& list, DType dtype);
void add_index_cases(std::vector<OpCase>& list, DType dtype);  // gather, compare, logical (bool only), where
void add_backward_cases(std::vector<OpCase>& list, DType dtype);
void add_attention_cases(std::vector<OpCase>& list, DType dtype);
void add_dropout_cases(std::vector<OpCase>& list, DType dtype);
void add_depthwise_gradient_cases(std::vector<OpCase>& list, DType dtype);

}  // namespace porta::cases::detail
