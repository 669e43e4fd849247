// Checks against values computed outside porta and committed with the scripts that made them
// (tests/oracles/README.md): activations by mpmath, f16 and bf16 bit patterns by numpy, GEMM,
// convolution and pooling by PyTorch. ref and cpu share their activation formulas and conversions,
// so the op cases, which compare devices with ref, cannot catch a mistake in those.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "core/runtime/embedded_source.hpp"
#include "op_cases/verify.hpp"
#include "test_util.hpp"

namespace porta::detail {
std::span<const EmbeddedSource> oracle_data();  // tests/oracles/*.txt, embedded by tests/CMakeLists.txt
}

namespace porta::test {
namespace {

using Row = std::vector<std::string>;

// The lines of tests/oracles/<stem>.txt that are not comments, split at spaces.
std::vector<Row> data_rows(std::string_view stem) {
  for (const detail::EmbeddedSource& file : detail::oracle_data()) {
    if (file.name != stem) continue;
    std::vector<Row> rows;
    std::istringstream lines{std::string(file.text)};
    for (std::string line; std::getline(lines, line);) {
      if (line.empty() || line.starts_with('#')) continue;
      std::istringstream words(line);
      rows.emplace_back(std::istream_iterator<std::string>(words), std::istream_iterator<std::string>());
    }
    return rows;
  }
  throw Error(ErrorCode::NotFound, "tests/oracles/" + std::string(stem) + ".txt is not embedded");
}

// strtod, which unlike std::stod takes values that underflow, as some expected values do.
double number(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  REQUIRE_MESSAGE(end == text.c_str() + text.size(), "'" << text << "' is not a number");
  return value;
}

std::string hex(std::uint32_t bits) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", bits);
  return text;
}

// PORTA_TEST_IMPL=vendor checks the vendor providers; ref has none and is checked as it is. Not
// PORTA_TEST_TF32: the activations' epilogue forms multiply by one, which is exact in f32 only.
Impl impl_under_test(const Device& device) {
  return device.info().backend == "ref" ? Impl::Native : options_under_test().impl;
}

// Compiles `graph`, or says why the device cannot run it and returns nothing.
std::optional<Executable> compile_or_skip(const Device& device, const Graph& graph, const CompileOptions& options,
                                          const std::string& what) {
  for (const Node& node : graph.nodes())
    if (const std::string reason = device.unsupported_reason(graph, node, options); !reason.empty()) {
      MESSAGE("skipping " << what << " on " << device.info().spec << ": " << reason);
      return std::nullopt;
    }
  return device.compile(graph, options);
}

std::optional<Activation> activation_named(std::string_view name) {
  for (int a = 0; a <= static_cast<int>(Activation::Gelu); ++a)
    if (to_string(static_cast<Activation>(a)) == name) return static_cast<Activation>(a);
  return std::nullopt;
}

// --- activations -----------------------------------------------------------------------------

struct Points {
  std::vector<float> x;
  std::vector<double> y;  // mpmath's value at x, rounded to f64
};

std::map<std::string, Points> activation_points() {
  std::map<std::string, Points> by_name;
  for (const Row& row : data_rows("activations")) {
    REQUIRE(row.size() == 3);
    const double x = number(row[1]);
    REQUIRE_MESSAGE(static_cast<double>(static_cast<float>(x)) == x, row[1] << " is not an f32 value");
    by_name[row[0]].x.push_back(static_cast<float>(x));
    by_name[row[0]].y.push_back(number(row[2]));
  }
  return by_name;
}

// The op activations.txt calls `name`: "clip:<min>:<max>" or an op of the graph builder.
Tensor activation_op(Graph& g, const std::string& name, Tensor x) {
  if (name.starts_with("clip:")) {
    const std::size_t colon = name.find(':', 5);
    return g.clip(x, static_cast<float>(number(name.substr(5, colon - 5))),
                  static_cast<float>(number(name.substr(colon + 1))));
  }
  if (name == "relu") return g.relu(x);
  if (name == "relu6") return g.relu6(x);
  if (name == "sigmoid") return g.sigmoid(x);
  if (name == "silu") return g.silu(x);
  if (name == "tanh") return g.tanh(x);
  if (name == "gelu") return g.gelu(x);
  if (name == "gelu_tanh") return g.gelu(x, {.tanh_approximation = true});
  throw Error(ErrorCode::InvalidArgument, "activations.txt names an unknown activation '" + name + "'");
}

// A graph that applies an activation to its input "x" of n values, and the options that steer it
// onto the path meant; the epilogue forms multiply by one, which is exact.
struct ActivationForm {
  std::string what;
  Graph graph;
  CompileOptions options;
};

std::vector<ActivationForm> activation_forms(const std::string& name, std::int64_t n) {
  std::vector<ActivationForm> forms;
  {
    Graph g;
    g.output("y", activation_op(g, name, g.input("x", {n})));
    forms.push_back({name + " op", std::move(g), {}});
  }
  const std::optional<Activation> fused = activation_named(name);
  if (!fused) return forms;  // clip and the tanh GELU exist as ops only
  {
    Graph g;
    const float one[] = {1.0f};
    g.output("y", g.gemm(g.constant("one", {1, 1}, one), g.input("x", {1, n}), {.activation = *fused}));
    forms.push_back({name + " in a GEMM epilogue", std::move(g), {}});
  }
  {
    Graph g;
    const float one[] = {1.0f};
    g.output("y", g.conv2d(g.input("x", {1, 1, 1, n}), g.constant("w", {1, 1, 1, 1}, one), {.activation = *fused}));
    forms.push_back({name + " in an NCHW conv epilogue", std::move(g), {.layout = Layout::NCHW}});
  }
  {
    // Depthwise and channels last: the epilogue runs along the n channels of one pixel.
    Graph g;
    const std::vector<float> ones(static_cast<std::size_t>(n), 1.0f);
    const Conv2dParams p{.groups = n, .activation = *fused, .layout = Layout::NHWC};
    g.output("y", g.conv2d(g.input("x", {1, 1, 1, n}), g.constant("w", {n, 1, 1, 1}, ones), p));
    forms.push_back({name + " in an NHWC depthwise conv epilogue", std::move(g), {.layout = Layout::NHWC}});
  }
  return forms;
}

// f32 math rounds each step to 2^-24: a correct result is within a few ulps of the exact value,
// about 1e-6 relative. Near zero the floor allows for sums that cancel, as 1 + erf(x) for x < 0
// does in GELU, where the error is that of erf's value near -1, of order 2^-24 * |x|.
constexpr double relative_tolerance = 1e-6, absolute_tolerance = 2e-7;

bool close_enough(double got, double want) {
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= relative_tolerance * std::abs(want) + absolute_tolerance;
}

// --- conversions -----------------------------------------------------------------------------

// One row of conversions.txt: an f32 pattern, numpy's f16 of it widened back, and bf16 rounded to nearest even.
struct Conversion {
  std::uint32_t f32, f16, f16_as_f32, bf16;
  std::string what;
};

std::vector<Conversion> conversions() {
  std::vector<Conversion> rows;
  for (const Row& row : data_rows("conversions")) {
    REQUIRE(row.size() >= 5);
    const auto bits = [&](std::size_t i) { return static_cast<std::uint32_t>(std::stoul(row[i], nullptr, 16)); };
    std::string what = row[4];
    for (std::size_t i = 5; i < row.size(); ++i) what += " " + row[i];
    rows.push_back({bits(0), bits(1), bits(2), bits(3), std::move(what)});
  }
  return rows;
}

bool is_nan(std::uint32_t bits, DType t) {
  switch (t) {
    case DType::f32: return (bits & 0x7fffffffu) > 0x7f800000u;
    case DType::f16: return (bits & 0x7fffu) > 0x7c00u;
    case DType::bf16: return (bits & 0x7fffu) > 0x7f80u;
    default: return false;  // integers have no NaN
  }
  return false;
}

// One direction of conversion: what goes in and what must come out, by row.
struct CastDirection {
  DType from, to;
  std::uint32_t (*input)(const Conversion&);
  std::uint32_t (*want)(const Conversion&);
};

const CastDirection cast_directions[] = {
    {DType::f32, DType::f16, [](const Conversion& c) { return c.f32; }, [](const Conversion& c) { return c.f16; }},
    {DType::f32, DType::bf16, [](const Conversion& c) { return c.f32; }, [](const Conversion& c) { return c.bf16; }},
    {DType::f16, DType::f32, [](const Conversion& c) { return c.f16; },
     [](const Conversion& c) { return c.f16_as_f32; }},
    {DType::bf16, DType::f32, [](const Conversion& c) { return c.bf16; },
     [](const Conversion& c) { return c.bf16 << 16; }},  // bf16 is the upper half of an f32
};

// Bytes of a float dtype's element: 4 or 2 (spelt out, so the compiler sees each copy's bound).
std::size_t float_size(DType t) { return t == DType::f32 ? 4 : 2; }

std::vector<std::byte> storage_of(std::span<const std::uint32_t> patterns, DType t) {
  std::vector<std::byte> bytes(patterns.size() * float_size(t));
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const auto narrow = static_cast<std::uint16_t>(patterns[i]);
    std::memcpy(bytes.data() + i * float_size(t), t == DType::f32 ? static_cast<const void*>(&patterns[i]) : &narrow,
                float_size(t));
  }
  return bytes;
}

std::uint32_t pattern_at(std::span<const std::byte> bytes, std::size_t i, DType t) {
  std::uint32_t wide = 0;
  std::uint16_t narrow = 0;
  std::memcpy(t == DType::f32 ? static_cast<void*>(&wide) : &narrow, bytes.data() + i * float_size(t), float_size(t));
  return t == DType::f32 ? wide : narrow;
}

// Each converted pattern must be the expected one, or a NaN for a NaN: which NaN is not specified.
void check_conversions(const CastDirection& d, std::span<const Conversion> rows, std::span<const std::byte> got,
                       const std::string& where) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::uint32_t want = d.want(rows[i]), out = pattern_at(got, i, d.to);
    const bool right = is_nan(want, d.to) ? is_nan(out, d.to) : out == want;
    CHECK_MESSAGE(right, where << ": " << to_string(d.from) << " " << hex(d.input(rows[i])) << " to "
                               << to_string(d.to) << " gave " << hex(out) << ", want " << hex(want) << " ("
                               << rows[i].what << ")");
  }
}

// --- ref against PyTorch ---------------------------------------------------------------------

using Params = std::map<std::string, std::string>;

std::vector<std::int64_t> ints(const Params& p, const std::string& key, std::vector<std::int64_t> absent = {}) {
  const auto it = p.find(key);
  if (it == p.end()) return absent;
  std::vector<std::int64_t> values;
  std::istringstream items(it->second);
  for (std::string item; std::getline(items, item, ',');) values.push_back(std::stoll(item));
  return values;
}

std::int64_t integer(const Params& p, const std::string& key, std::int64_t absent = 0) {
  return ints(p, key, {absent}).at(0);
}

template <std::size_t N>
std::array<std::int64_t, N> fixed(const Params& p, const std::string& key, std::array<std::int64_t, N> absent) {
  const std::vector<std::int64_t> values = ints(p, key, {absent.begin(), absent.end()});
  REQUIRE_MESSAGE(values.size() == N, key << " needs " << N << " values");
  std::array<std::int64_t, N> result{};
  std::copy(values.begin(), values.end(), result.begin());
  return result;
}

float real(const Params& p, const std::string& key, float absent) {
  const auto it = p.find(key);
  return it == p.end() ? absent : static_cast<float>(number(it->second));
}

Activation activation_of(const Params& p) {
  const auto it = p.find("activation");
  if (it == p.end()) return Activation::None;
  const std::optional<Activation> a = activation_named(it->second);
  REQUIRE_MESSAGE(a, "unknown activation '" << it->second << "'");
  return *a;
}

Layout layout_of(const Params& p) {
  const auto it = p.find("layout");
  return it != p.end() && it->second == to_string(Layout::NHWC) ? Layout::NHWC : Layout::NCHW;
}

// The graph of one case of ref_cases.txt. Its inputs are made in the order the script draws them,
// which is the order cases::set_random_inputs seeds them in.
Graph ref_case_graph(const std::string& op, const Params& p) {
  Graph g;
  const auto input = [&](const std::string& key) { return g.input(key, ints(p, key)); };
  Tensor y;
  if (op == "matmul") {
    const Tensor a = input("a"), b = input("b");
    y = g.matmul(a, b, {.trans_a = integer(p, "trans_a") != 0, .trans_b = integer(p, "trans_b") != 0});
  } else if (op == "gemm") {
    const Tensor a = input("a"), b = input("b");
    const Tensor c = p.contains("c") ? input("c") : Tensor{};
    y = g.gemm(a, b,
               {.trans_a = integer(p, "trans_a") != 0, .trans_b = integer(p, "trans_b") != 0,
                .alpha = real(p, "alpha", 1.0f), .beta = real(p, "beta", 1.0f), .activation = activation_of(p)},
               c);
  } else if (op == "conv2d") {
    const Conv2dParams cp{.stride = fixed<2>(p, "stride", {1, 1}), .pad = fixed<4>(p, "pad", {0, 0, 0, 0}),
                          .dilation = fixed<2>(p, "dilation", {1, 1}), .groups = integer(p, "groups", 1),
                          .activation = activation_of(p), .layout = layout_of(p)};
    const Tensor x = input("x"), w = input("w");
    const Tensor bias = integer(p, "bias") != 0 ? g.input("bias", {g.shape(w)[0]}) : Tensor{};
    Tensor residual;
    if (integer(p, "residual") != 0) {
      Graph probe;  // the output's shape, as the builder infers it
      const Tensor out = probe.conv2d(probe.input("x", g.shape(x)), probe.input("w", g.shape(w)), cp);
      residual = g.input("residual", probe.shape(out));
    }
    y = g.conv2d(x, w, cp, bias, {}, residual);
  } else if (op == "max_pool2d" || op == "avg_pool2d") {
    const Pool2dParams pp{.kernel = fixed<2>(p, "kernel", {1, 1}), .stride = fixed<2>(p, "stride", {1, 1}),
                          .pad = fixed<4>(p, "pad", {0, 0, 0, 0}), .dilation = fixed<2>(p, "dilation", {1, 1}),
                          .ceil_mode = integer(p, "ceil_mode") != 0,
                          .count_include_pad = integer(p, "count_include_pad") != 0, .layout = layout_of(p)};
    y = op == "max_pool2d" ? g.max_pool2d(input("x"), pp) : g.avg_pool2d(input("x"), pp);
  } else if (op == "global_avg_pool") {
    y = g.global_avg_pool(input("x"), {.layout = layout_of(p)});
  } else {
    throw Error(ErrorCode::InvalidArgument, "ref_cases.txt names an unknown op '" + op + "'");
  }
  g.output("y", y);
  return g;
}

}  // namespace

TEST_SUITE("ops") {
  TEST_CASE("oracle: every activation, as an op and fused, matches mpmath on ref and every device under test") {
    const std::map<std::string, Points> points = activation_points();
    REQUIRE(points.size() == 8);  // relu, relu6, clip, sigmoid, silu, tanh and both GELUs
    for (const Device& device : ref_and_devices_under_test()) {
      const std::string spec = device.info().spec;
      int checked = 0;
      for (const auto& [name, values] : points) {
        for (ActivationForm& form : activation_forms(name, static_cast<std::int64_t>(values.x.size()))) {
          CAPTURE(form.what);
          form.options.impl = impl_under_test(device);
          std::optional<Executable> exe = compile_or_skip(device, form.graph, form.options, form.what);
          if (!exe) continue;
          exe->set_input("x", values.x);
          exe->run();
          const std::vector<float> y = exe->output("y");
          REQUIRE(y.size() == values.x.size());
          for (std::size_t i = 0; i < y.size(); ++i)
            CHECK_MESSAGE(close_enough(y[i], values.y[i]), form.what << " on " << spec << " at x = " << values.x[i]
                                                                     << ": got " << y[i] << ", want " << values.y[i]);
          ++checked;
        }
      }
      MESSAGE(spec << ": " << checked << " activation graphs checked");
    }
  }

  TEST_CASE("oracle: f16 and bf16 conversions give numpy's bit patterns, in dtype.hpp and a cast on every device") {
    const std::vector<Conversion> rows = conversions();
    REQUIRE(!rows.empty());
    const std::vector<Device> devices = ref_and_devices_under_test();
    for (const CastDirection& d : cast_directions) {
      std::vector<std::uint32_t> inputs;
      for (const Conversion& c : rows) inputs.push_back(d.input(c));
      const std::vector<std::byte> in = storage_of(inputs, d.from);
      std::vector<std::byte> converted(rows.size() * size_of(d.to));
      for (std::size_t i = 0; i < rows.size(); ++i)
        store_from_f32(converted.data(), i, d.to, load_as_f32(in.data(), i, d.from));
      check_conversions(d, rows, converted, "dtype.hpp");

      Graph g;
      g.output("y", g.cast(g.input("x", {static_cast<std::int64_t>(rows.size())}, d.from), d.to));
      const std::string what = "cast " + std::string(to_string(d.from)) + " to " + std::string(to_string(d.to));
      for (const Device& device : devices) {
        std::optional<Executable> exe = compile_or_skip(device, g, {.impl = impl_under_test(device)}, what);
        if (!exe) continue;
        exe->set_input_bytes("x", in);
        exe->run();
        check_conversions(d, rows, exe->output_bytes("y"), what + " on " + device.info().spec);
      }
    }
  }
}

TEST_CASE("oracle: ref matches PyTorch on GEMM, convolution and pooling cases") {
  const std::vector<Row> rows = data_rows("ref_cases");
  REQUIRE(rows.size() > 1);
  // The inputs are drawn from seeds on both sides: first, that the script draws what C++ does.
  const Row& draw = rows[0];
  REQUIRE(draw.size() > 2);
  REQUIRE(draw[0] == "random_values");
  REQUIRE(draw[1] == "seed=1");
  const std::vector<float> drawn = cases::random_values(draw.size() - 2, 1);
  for (std::size_t i = 2; i < draw.size(); ++i)
    REQUIRE_MESSAGE(drawn[i - 2] == number(draw[i]), "make_ref_cases.py no longer mirrors cases::random_values");

  const Device ref = Device::open("ref");
  REQUIRE((rows.size() - 1) % 2 == 0);
  int checked = 0;
  for (std::size_t r = 1; r < rows.size(); r += 2) {
    const Row& head = rows[r];
    REQUIRE(head.size() >= 3);
    const std::string name = head[0] + "/" + head[1];
    CAPTURE(name);
    Params p;
    for (std::size_t i = 2; i < head.size(); ++i) {
      const std::size_t eq = head[i].find('=');
      REQUIRE(eq != std::string::npos);
      p[head[i].substr(0, eq)] = head[i].substr(eq + 1);
    }
    const Graph graph = ref_case_graph(head[0], p);
    Executable exe = ref.compile(graph, {.poison_memory = true});
    cases::set_random_inputs(exe, graph, static_cast<std::uint64_t>(integer(p, "seed")));
    exe.run();
    std::vector<float> want;
    for (const std::string& v : rows[r + 1]) want.push_back(static_cast<float>(number(v)));
    const std::vector<float> got = exe.output("y");
    REQUIRE_MESSAGE(got.size() == want.size(), name << ": " << got.size() << " values, PyTorch has " << want.size());
    const cases::Comparison c = cases::compare(got, want);
    CHECK_MESSAGE((c.non_finite == 0 && c.nmse < 1e-10), name << ": nmse " << c.nmse << ", max abs error " << c.max_abs
                                                              << " at element " << c.worst);
    ++checked;
  }
  MESSAGE(checked << " cases checked against PyTorch");
}

}  // namespace porta::test
