// Fuzzes the graph builder with random sequences of ops, shapes and parameters, extremes included.
// Every builder call must return or throw porta::Error; a crash, a sanitizer report or any other
// exception is a bug. Small graphs are also compiled and run on ref and cpu, which reaches the
// compile passes, the memory planner and the kernels.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "porta/porta.hpp"

namespace {

using namespace porta;

constexpr std::int64_t run_limit = 1 << 14;  // total elements of a graph that is compiled and run

// Mostly small sizes, some invalid ones, and now and then anything at all.
std::int64_t size(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 9)) {
    case 0: return in.ConsumeIntegral<std::int64_t>();
    case 1: return std::int64_t{1} << in.ConsumeIntegralInRange(0, 62);
    case 2: return std::numeric_limits<std::int64_t>::min() >> in.ConsumeIntegralInRange(0, 63);
    default: return in.ConsumeIntegralInRange<std::int64_t>(-1, 7);
  }
}

Shape shape(FuzzedDataProvider& in) {
  Shape s(in.ConsumeIntegralInRange<std::size_t>(0, 9));
  for (auto& d : s) d = size(in);
  return s;
}

template <std::size_t N>
std::array<std::int64_t, N> sizes(FuzzedDataProvider& in) {
  std::array<std::int64_t, N> a{};
  for (auto& v : a) v = size(in);
  return a;
}

// One past the last enumerator too: the builder must reject values that name nothing.
DType dtype(FuzzedDataProvider& in) { return static_cast<DType>(in.ConsumeIntegralInRange(0, 3)); }
Activation activation(FuzzedDataProvider& in) { return static_cast<Activation>(in.ConsumeIntegralInRange(0, 7)); }

float number(FuzzedDataProvider& in) {
  return in.ConsumeBool() ? in.ConsumeFloatingPoint<float>() : static_cast<float>(in.ConsumeIntegralInRange(-2, 8));
}

// A few names, so that some collide; empty means "let the builder name it" (or, for inputs, an error).
std::string name(FuzzedDataProvider& in) {
  static const char* const names[] = {"", "x", "y", "w", "relu_3"};
  return in.ConsumeBool() ? names[in.ConsumeIntegralInRange(0, 4)] : in.ConsumeRandomLengthString(12);
}

// A tensor of the graph, now and then a handle that is not one.
Tensor tensor(FuzzedDataProvider& in, const Graph& g) {
  const auto count = static_cast<std::int32_t>(g.tensors().size());
  if (count == 0 || in.ConsumeIntegralInRange(0, 15) == 0) return Tensor{in.ConsumeIntegralInRange(-1, count + 1)};
  return Tensor{in.ConsumeIntegralInRange(0, count - 1)};
}

// Element count of a valid shape, or -1 when it is invalid or too large to make values for.
std::int64_t small_count(const Shape& s) {
  std::int64_t n = 1;
  for (const auto d : s)
    if (d < 1 || __builtin_mul_overflow(n, d, &n) || n > run_limit) return -1;
  return n;
}

void add_op(FuzzedDataProvider& in, Graph& g) {
  switch (in.ConsumeIntegralInRange(0, 25)) {
    case 0: {
      Shape s = shape(in);
      Shape strides;
      if (in.ConsumeBool()) strides = shape(in);
      g.input(name(in), std::move(s), dtype(in), std::move(strides));
      break;
    }
    case 1: {
      Shape s = shape(in);
      const std::int64_t count = small_count(s);
      std::vector<float> values(count >= 0 && in.ConsumeBool() ? static_cast<std::size_t>(count)
                                                               : in.ConsumeIntegralInRange<std::size_t>(0, 16));
      for (auto& v : values) v = number(in);
      g.constant(name(in), std::move(s), values, dtype(in));
      break;
    }
    case 2: g.output(name(in), tensor(in, g)); break;
    case 3: {
      const Tensor a = tensor(in, g), b = tensor(in, g);
      g.matmul(a, b, {.trans_a = in.ConsumeBool(), .trans_b = in.ConsumeBool()}, name(in));
      break;
    }
    case 4: {
      const Tensor a = tensor(in, g), b = tensor(in, g);
      const GemmParams p{.trans_a = in.ConsumeBool(), .trans_b = in.ConsumeBool(), .alpha = number(in),
                         .beta = number(in), .activation = activation(in)};
      g.gemm(a, b, p, in.ConsumeBool() ? tensor(in, g) : Tensor{}, name(in));
      break;
    }
    case 5: {
      const Tensor x = tensor(in, g), w = tensor(in, g);
      const Conv2dParams p{.stride = sizes<2>(in), .pad = sizes<4>(in), .dilation = sizes<2>(in), .groups = size(in),
                           .activation = activation(in)};
      const Tensor bias = in.ConsumeBool() ? tensor(in, g) : Tensor{};
      const std::string node = name(in);
      g.conv2d(x, w, p, bias, node, in.ConsumeBool() ? tensor(in, g) : Tensor{});
      break;
    }
    case 6: g.add(tensor(in, g), tensor(in, g), name(in)); break;
    case 7: g.sub(tensor(in, g), tensor(in, g), name(in)); break;
    case 8: g.mul(tensor(in, g), tensor(in, g), name(in)); break;
    case 9: g.div(tensor(in, g), tensor(in, g), name(in)); break;
    case 10: {
      const Tensor x = tensor(in, g);
      switch (in.ConsumeIntegralInRange(0, 5)) {
        case 0: g.relu(x, name(in)); break;
        case 1: g.relu6(x, name(in)); break;
        case 2: g.sigmoid(x, name(in)); break;
        case 3: g.silu(x, name(in)); break;
        case 4: g.tanh(x, name(in)); break;
        default: g.gelu(x, {.tanh_approximation = in.ConsumeBool()}, name(in)); break;
      }
      break;
    }
    case 11: {
      const Tensor x = tensor(in, g);
      const float lo = number(in), hi = number(in);
      g.clip(x, lo, hi, name(in));
      break;
    }
    case 12: {
      const Tensor x = tensor(in, g), s = tensor(in, g), b = tensor(in, g), m = tensor(in, g), v = tensor(in, g);
      g.batchnorm(x, s, b, m, v, {.epsilon = number(in)}, name(in));
      break;
    }
    case 13:
    case 14: {
      const Tensor x = tensor(in, g);
      const Pool2dParams p{.kernel = sizes<2>(in), .stride = sizes<2>(in), .pad = sizes<4>(in),
                           .dilation = sizes<2>(in), .ceil_mode = in.ConsumeBool(),
                           .count_include_pad = in.ConsumeBool()};
      in.ConsumeBool() ? g.max_pool2d(x, p, name(in)) : g.avg_pool2d(x, p, name(in));
      break;
    }
    case 15: g.global_avg_pool(tensor(in, g), name(in)); break;
    case 16: {
      const Tensor x = tensor(in, g);
      g.softmax(x, size(in), name(in));
      break;
    }
    case 17: {
      const Tensor x = tensor(in, g);
      g.reshape(x, shape(in), name(in));
      break;
    }
    case 18: {
      const Tensor x = tensor(in, g);
      g.flatten(x, size(in), name(in));
      break;
    }
    case 19: {
      const Tensor x = tensor(in, g);
      g.transpose(x, shape(in), name(in));  // a perm is a list of int64 like a shape
      break;
    }
    case 20: {
      std::vector<Tensor> xs(in.ConsumeIntegralInRange<std::size_t>(0, 4));
      for (auto& x : xs) x = tensor(in, g);
      g.concat(xs, size(in), name(in));
      break;
    }
    case 21: {
      const Tensor x = tensor(in, g);
      g.slice(x, {shape(in), shape(in), shape(in), shape(in)}, name(in));  // index lists are int64 like a shape
      break;
    }
    case 22: {
      const Tensor x = tensor(in, g);
      g.split(x, size(in), shape(in), name(in));
      break;
    }
    case 23: {
      const Tensor x = tensor(in, g);
      g.pad(x, {shape(in), static_cast<PadMode>(in.ConsumeIntegralInRange(0, 3)), number(in)}, name(in));
      break;
    }
    case 24: {
      const Tensor x = tensor(in, g);
      g.expand(x, shape(in), name(in));
      break;
    }
    default: {
      const Tensor x = tensor(in, g);
      g.cast(x, dtype(in), name(in));
      break;
    }
  }
}

// Compiles and runs a small graph, so the planner and every kernel see what the builder accepted.
void compile_and_run(const Graph& g) {
  if (g.outputs().empty()) return;
  std::int64_t total = 0;
  for (const TensorInfo& t : g.tensors()) {
    const std::int64_t n = small_count(t.desc.shape);
    if (n < 0 || (total += n) > run_limit) return;
  }
  static const Device ref = Device::open("ref"), cpu = Device::open("cpu:threads=1");
  for (const Device* device : {&ref, &cpu}) {
    Executable exe = device->compile(g, {.poison_memory = true});
    for (const Tensor t : g.inputs()) {
      const TensorInfo& info = g.info(t);
      std::int64_t needed = 1;  // a strided input reaches its last element at sum(stride * (dim - 1))
      if (info.input_strides.empty()) needed = info.desc.numel();
      for (std::size_t d = 0; d < info.input_strides.size(); ++d)
        needed += info.input_strides[d] * (info.desc.shape[d] - 1);
      if (needed > run_limit) return;
      exe.set_input(info.name, std::vector<float>(static_cast<std::size_t>(needed), 0.5f));
    }
    exe.run();
    for (const auto& [name, t] : g.outputs()) exe.output(name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  Graph g;
  for (int step = 0; step < 48 && in.remaining_bytes() > 0; ++step) {
    try {
      add_op(in, g);
    } catch (const porta::Error&) {
      // A clear error is the right answer to a bad call; the graph must stay usable after it.
    }
  }
  try {
    compile_and_run(g);
  } catch (const porta::Error& e) {
    // Only resource limits may stop a graph the builder accepted.
    if (e.code() != ErrorCode::OutOfMemory && e.code() != ErrorCode::Unsupported) throw;
  }
  return 0;
}
