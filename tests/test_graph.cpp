// The graph builder: shape and dtype inference of every op, and one test per class of bad input,
// each checking the error code and that the message names the offending value.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <variant>

#include "test_util.hpp"

namespace porta::test {
namespace {

using E = ErrorCode;

const std::vector<float> ones(std::size_t n) { return std::vector<float>(n, 1.0f); }

const Node& producer(const Graph& g, Tensor t) { return g.nodes().at(static_cast<std::size_t>(g.info(t).producer)); }

}  // namespace

TEST_SUITE("graph") {
  TEST_CASE("inputs, constants and outputs") {
    Graph g;
    const Tensor x = g.input("x", {2, 3}, DType::f16);
    const Tensor w = g.constant("w", {3}, ones(3), DType::bf16);
    CHECK(g.shape(x) == Shape{2, 3});
    CHECK(g.dtype(x) == DType::f16);
    CHECK(g.info(x).role == Role::Input);
    CHECK(g.info(w).role == Role::Constant);
    REQUIRE(g.info(w).data);
    CHECK(g.info(w).data->size() == 6);
    CHECK(bf16_to_f32(reinterpret_cast<const std::uint16_t*>(g.info(w).data->data())[2]) == 1.0f);
    const std::byte raw[4] = {};
    CHECK(g.desc(g.constant_bytes("raw", {2}, DType::f16, raw)).bytes() == 4);
    g.output("y", x);
    g.output("y_again", x);  // a tensor may be output under several names
    CHECK(g.outputs().size() == 2);
    CHECK(g.inputs() == std::vector<Tensor>{x});
    const Tensor s = g.input("s", {4, 3}, DType::f32, {1, 4});
    CHECK(g.info(s).input_strides == Shape{1, 4});
  }

  TEST_CASE("matmul shapes: transposes, broadcast batch dims and vectors") {
    Graph g;
    int n = 0;
    const auto mm = [&](Shape a, Shape b, MatMulParams p = {}) {
      const std::string id = std::to_string(n++);
      return g.shape(g.matmul(g.input("a" + id, a), g.input("b" + id, b), p));
    };
    CHECK(mm({3, 5}, {5, 7}) == Shape{3, 7});
    CHECK(mm({5, 3}, {5, 7}, {.trans_a = true}) == Shape{3, 7});
    CHECK(mm({3, 5}, {7, 5}, {.trans_b = true}) == Shape{3, 7});
    CHECK(mm({5, 3}, {7, 5}, {.trans_a = true, .trans_b = true}) == Shape{3, 7});
    CHECK(mm({3, 1, 5, 17}, {4, 17, 2}) == Shape{3, 4, 5, 2});
    CHECK(mm({2, 3, 4}, {4, 6}) == Shape{2, 3, 6});
    CHECK(mm({17}, {17, 5}) == Shape{5});
    CHECK(mm({5, 17}, {17}) == Shape{5});
    CHECK(mm({17}, {17}) == Shape{1});
    CHECK(mm({2, 3, 17}, {17}) == Shape{2, 3});
    CHECK(mm({17}, {2, 17, 3}) == Shape{2, 3});
    const Tensor y = g.matmul(g.input("h", {2, 2}, DType::bf16), g.input("i", {2, 2}, DType::bf16));
    CHECK(g.dtype(y) == DType::bf16);
    CHECK(producer(g, y).op == OpKind::MatMul);
    CHECK(producer(g, y).name == "matmul_" + std::to_string(g.nodes().size() - 1));  // default name
  }

  TEST_CASE("gemm shapes and parameters") {
    Graph g;
    const Tensor a = g.input("a", {4, 3}), b = g.input("b", {5, 4});
    const Tensor y = g.gemm(a, b, {.trans_a = true, .trans_b = true, .alpha = 2.0f, .activation = Activation::Relu},
                            g.input("c", {3, 1}), "fc");
    CHECK(g.shape(y) == Shape{3, 5});
    const Node& node = producer(g, y);
    CHECK(node.name == "fc");
    CHECK(node.inputs.size() == 3);
    CHECK(std::get<GemmParams>(node.params).alpha == 2.0f);
    CHECK(std::get<GemmParams>(node.params).activation == Activation::Relu);
    CHECK(g.shape(g.gemm(g.input("d", {2, 3}), g.input("e", {3, 6}))) == Shape{2, 6});
    CHECK(producer(g, g.gemm(g.input("f", {2, 3}), g.input("h", {3, 6}))).inputs.size() == 2);
  }

  TEST_CASE("conv2d output sizes follow stride, padding, dilation and groups") {
    Graph g;
    int n = 0;
    const auto conv = [&](Shape x, Shape w, Conv2dParams p) {
      const auto id = std::to_string(n++);
      return g.shape(g.conv2d(g.input("x" + id, x), g.input("w" + id, w), p));
    };
    CHECK(conv({1, 3, 8, 8}, {4, 3, 3, 3}, {}) == Shape{1, 4, 6, 6});
    CHECK(conv({2, 3, 9, 9}, {4, 3, 3, 3}, {.stride = {2, 2}, .pad = {1, 1, 1, 1}}) == Shape{2, 4, 5, 5});
    CHECK(conv({1, 3, 6, 7}, {2, 3, 3, 3}, {.pad = {1, 0, 2, 1}}) == Shape{1, 2, 7, 6});
    CHECK(conv({1, 3, 9, 9}, {4, 3, 3, 3}, {.dilation = {2, 3}}) == Shape{1, 4, 5, 3});
    CHECK(conv({1, 6, 5, 5}, {9, 2, 1, 3}, {.groups = 3}) == Shape{1, 9, 5, 3});
    CHECK(conv({1, 5, 8, 7}, {5, 1, 3, 3}, {.pad = {1, 1, 1, 1}, .groups = 5}) == Shape{1, 5, 8, 7});
    CHECK(conv({2, 6, 11, 10}, {4, 3, 3, 2},
               {.stride = {2, 3}, .pad = {1, 2, 0, 1}, .dilation = {2, 1}, .groups = 2}) == Shape{2, 4, 4, 4});
    const Tensor y = g.conv2d(g.input("xb", {1, 2, 4, 4}), g.input("wb", {3, 2, 1, 1}), {}, g.input("bias", {3}));
    CHECK(producer(g, y).inputs.size() == 3);
  }

  TEST_CASE("elementwise, activations and batchnorm keep or broadcast shapes") {
    Graph g;
    const Tensor x = g.input("x", {2, 1, 3}, DType::f16);
    CHECK(g.shape(g.add(x, g.input("r", {4, 1}, DType::f16))) == Shape{2, 4, 3});
    CHECK(g.shape(g.sub(g.input("s", {1}, DType::f16), x)) == Shape{2, 1, 3});
    CHECK(g.shape(g.mul(x, x)) == Shape{2, 1, 3});
    CHECK(g.dtype(g.div(x, x)) == DType::f16);
    for (const Tensor y : {g.relu(x), g.sigmoid(x), g.silu(x), g.tanh(x), g.gelu(x), g.clip(x, -1, 1), g.erf(x),
                           g.sqrt(x), g.reciprocal(x), g.hard_sigmoid(x), g.hard_swish(x)}) {
      CHECK(g.shape(y) == g.shape(x));
      CHECK(g.dtype(y) == DType::f16);
    }
    CHECK(g.shape(g.pow(x, g.input("e", {4, 1}, DType::f16))) == Shape{2, 4, 3});
    const auto& hs = std::get<HardSigmoidParams>(producer(g, g.hard_sigmoid(x, {.alpha = 0.3f, .beta = 0.4f})).params);
    CHECK(hs.alpha == 0.3f);
    CHECK(hs.beta == 0.4f);
    check_error([&] { g.hard_sigmoid(x, {.alpha = NAN}, "hs"); }, ErrorCode::InvalidArgument, {"'hs'", "finite"});
    check_error([&] { g.pow(x, g.input("e32", {3})); }, ErrorCode::DTypeMismatch, {"pow", "insert a cast"});
    const Node& relu6 = producer(g, g.relu6(x));
    CHECK(relu6.op == OpKind::Clip);
    CHECK(std::get<ClipParams>(relu6.params).min == 0.0f);
    CHECK(std::get<ClipParams>(relu6.params).max == 6.0f);
    CHECK(std::get<GeluParams>(producer(g, g.gelu(x, {.tanh_approximation = true})).params).tanh_approximation);
    Graph h;
    const Tensor c = h.input("c", {3});
    const Tensor bn = h.batchnorm(h.input("y", {2, 3, 4, 5}), c, c, c, c, {.epsilon = 1e-3f});
    CHECK(h.shape(bn) == Shape{2, 3, 4, 5});
    const Tensor rows = h.input("rows", {2, 3, 4});
    const Tensor ln = h.layer_norm(rows, h.input("s", {3, 4}), h.input("b", {3, 4}), {.axis = -2, .epsilon = 1e-3f});
    CHECK(h.shape(ln) == Shape{2, 3, 4});
    const Tensor masked = h.softmax(rows, -1, h.input("m", {3, 1}), "attn");
    CHECK(producer(h, masked).op == OpKind::Softmax);
    CHECK(h.nodes()[static_cast<std::size_t>(h.info(producer(h, masked).inputs[0]).producer)].name == "attn/mask");
    check_error([&] { h.softmax(rows, -1, h.input("wide", {2, 3, 4, 1}), "sm"); }, ErrorCode::ShapeMismatch,
                {"'sm'", "mask", "broadcast"});
    CHECK(std::get<NormParams>(producer(h, ln).params).axis == 1);
    CHECK(producer(h, h.rms_norm(rows, h.input("r", {4}))).inputs.size() == 2);
    check_error([&] { h.layer_norm(rows, h.input("bad", {3}), {}, {}, "ln"); }, ErrorCode::ShapeMismatch,
                {"'ln'", "[3]", "[4]"});
    check_error([&] { h.rms_norm(rows, c, {.axis = 3}); }, ErrorCode::InvalidArgument, {"axis 3"});
    check_error([&] { h.rms_norm(rows, h.input("e", {4}), {.epsilon = -1.0f}); }, ErrorCode::InvalidArgument,
                {"epsilon"});
    CHECK(std::get<BatchNormParams>(producer(h, bn).params).epsilon == 1e-3f);
  }

  TEST_CASE("pooling shapes, ceil_mode included") {
    Graph g;
    const Tensor x = g.input("x", {1, 2, 7, 7});
    CHECK(g.shape(g.max_pool2d(x, {.kernel = {2, 2}, .stride = {2, 2}})) == Shape{1, 2, 3, 3});
    CHECK(g.shape(g.max_pool2d(x, {.kernel = {2, 2}, .stride = {2, 2}, .ceil_mode = true})) == Shape{1, 2, 4, 4});
    CHECK(g.shape(g.avg_pool2d(x, {.kernel = {3, 3}, .pad = {1, 1, 1, 1}})) == Shape{1, 2, 7, 7});
    CHECK(g.shape(g.avg_pool2d(x, {.kernel = {2, 2}, .dilation = {3, 3}})) == Shape{1, 2, 4, 4});
    CHECK(g.shape(g.global_avg_pool(x)) == Shape{1, 2, 1, 1});
    // ONNX: the last ceil_mode window must start inside the input or its left padding.
    const Tensor y = g.input("y", {1, 1, 8, 8});
    CHECK(g.shape(g.max_pool2d(y, {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1, 1, 1}, .ceil_mode = true})) ==
          Shape{1, 1, 5, 5});
    // 7 + 1 padding, window 2, stride 3: ceil gives 4 windows, but the 4th would start in the right padding.
    CHECK(g.shape(g.max_pool2d(g.input("z", {1, 1, 7, 7}), {.kernel = {2, 2}, .stride = {3, 3}, .pad = {1, 1, 1, 1},
                                                             .ceil_mode = true})) == Shape{1, 1, 3, 3});
  }

  TEST_CASE("softmax, reshape, flatten, transpose, concat and cast") {
    Graph g;
    const Tensor x = g.input("x", {2, 3, 4});
    CHECK(std::get<SoftmaxParams>(producer(g, g.softmax(x, -1)).params).axis == 2);
    CHECK(std::get<SoftmaxParams>(producer(g, g.softmax(x, 0)).params).axis == 0);
    CHECK(g.shape(g.reshape(x, {-1, 4})) == Shape{6, 4});
    const Tensor r = g.reshape(x, {0, -1});
    CHECK(g.shape(r) == Shape{2, 12});
    CHECK(std::get<ReshapeParams>(producer(g, r).params).shape == Shape{2, 12});  // resolved
    CHECK(g.shape(g.reshape(x, {4, 1, 6})) == Shape{4, 1, 6});
    CHECK(g.shape(g.flatten(x)) == Shape{2, 12});
    CHECK(g.shape(g.flatten(x, 0)) == Shape{1, 24});
    CHECK(g.shape(g.flatten(x, 3)) == Shape{24, 1});
    CHECK(g.shape(g.flatten(x, -1)) == Shape{6, 4});
    CHECK(producer(g, g.flatten(x)).op == OpKind::Reshape);
    CHECK(g.shape(g.transpose(x, {})) == Shape{4, 3, 2});
    CHECK(g.shape(g.transpose(x, {2, 0, 1})) == Shape{4, 2, 3});
    CHECK(std::get<TransposeParams>(producer(g, g.transpose(x, {-1, 0, 1})).params).perm ==
          std::vector<std::int64_t>{2, 0, 1});
    const Tensor parts[] = {x, g.input("y", {2, 5, 4}), x};
    const Tensor c = g.concat(parts, -2);
    CHECK(g.shape(c) == Shape{2, 11, 4});
    CHECK(std::get<ConcatParams>(producer(g, c).params).axis == 1);
    CHECK(producer(g, c).inputs.size() == 3);
    const Tensor h = g.cast(x, DType::f16);
    CHECK(g.dtype(h) == DType::f16);
    CHECK(g.shape(h) == Shape{2, 3, 4});
    CHECK(g.dtype(g.cast(h, DType::bf16)) == DType::bf16);
  }

  TEST_CASE("slice, split, pad and expand shapes and resolved parameters") {
    constexpr std::int64_t end = std::numeric_limits<std::int64_t>::max();
    Graph g;
    const Tensor x = g.input("x", {4, 5, 6});
    const Tensor s = g.slice(x, {{1, -1}, {end, -end}, {-1, 1}, {2, -2}});
    CHECK(g.shape(s) == Shape{4, 3, 3});  // axis 2: 1, 3, 5; axis 1: 4, 2, 0
    CHECK(std::get<SliceParams>(producer(g, s).params).axes == std::vector<std::int64_t>{2, 1});
    CHECK(g.shape(g.slice(x, {{-100}, {100}, {}, {}})) == Shape{4, 5, 6});  // clamped
    CHECK(g.shape(g.slice(x, {{}, {}, {}, {}})) == Shape{4, 5, 6});
    const std::int64_t sizes[] = {1, 3, 1};
    const std::vector<Tensor> pieces = g.split(x, -2, sizes, "sp");
    REQUIRE(pieces.size() == 3);
    CHECK(g.shape(pieces[1]) == Shape{4, 3, 6});
    CHECK(producer(g, pieces[2]).op == OpKind::Slice);
    CHECK(producer(g, pieces[2]).name == "sp_2");
    CHECK(g.shape(g.pad(x, {{0, 1, 2, 3, 0, -1}, PadMode::Constant, 1.0f})) == Shape{7, 6, 7});
    CHECK(g.shape(g.pad(x, {{3, 4, 5, 3, 4, 5}, PadMode::Reflect})) == Shape{10, 13, 16});
    CHECK(g.shape(g.pad(x, {{9, 0, 0, 0, 0, 9}, PadMode::Edge})) == Shape{13, 5, 15});
    CHECK(g.shape(g.expand(g.input("c", {5, 1}), {2, 1, 7})) == Shape{2, 5, 7});
    CHECK(std::get<ExpandParams>(producer(g, g.expand(x, {1, 1})).params).shape == Shape{4, 5, 6});
  }

  TEST_CASE("slice, pad and expand values on the reference") {
    Graph g;
    const Tensor x = g.input("x", {2, 4});  // 0 1 2 3 / 4 5 6 7
    g.output("reversed", g.slice(x, {{-1, 3}, {-10, 0}, {0, 1}, {-1, -2}}));
    g.output("reflect", g.pad(x, {{1, 3, 0, 2}, PadMode::Reflect}));
    g.output("edge", g.pad(x, {{0, 2, 1, 0}, PadMode::Edge}));
    g.output("constant", g.pad(x, {{1, -1, 0, 1}, PadMode::Constant, 9.0f}));
    g.output("expanded", g.expand(g.slice(x, {{1}, {2}, {1}, {}}), {2, 2, 1}));
    Executable exe = Device::open("ref").compile(g);
    exe.set_input("x", std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7});
    exe.run();
    CHECK(exe.output("reversed") == std::vector<float>{7, 5, 3, 1});
    CHECK(exe.output("reflect") == std::vector<float>{7, 6, 5, 4, 5, 6, 7, 6, 5,  //
                                                      3, 2, 1, 0, 1, 2, 3, 2, 1,  //
                                                      7, 6, 5, 4, 5, 6, 7, 6, 5});
    CHECK(exe.output("edge") == std::vector<float>{0, 0, 0, 1, 2, 3, 4, 4, 4, 5, 6, 7, 4, 4, 4, 5, 6, 7});
    CHECK(exe.output("constant") == std::vector<float>{9, 9, 9, 9, 1, 2, 3, 9, 5, 6, 7, 9});
    CHECK(exe.output("expanded") == std::vector<float>{1, 5, 1, 5});
  }

  // --- one test per class of bad input --------------------------------------------------------

  TEST_CASE("bad input: slice, split, pad and expand parameters") {
    Graph g;
    const Tensor x = g.input("x", {2, 3});
    check_error([&] { g.slice(x, {{0}, {1, 2}, {}, {}}); }, E::InvalidArgument, {"starts [0]", "ends [1, 2]"});
    check_error([&] { g.slice(x, {{0, 0}, {1, 1}, {1, -1}, {}}); }, E::InvalidArgument, {"axis 1 twice"});
    check_error([&] { g.slice(x, {{0}, {1}, {2}, {}}); }, E::InvalidArgument, {"axis 2"});
    check_error([&] { g.slice(x, {{0}, {1}, {0}, {0}}); }, E::InvalidArgument, {"step 0"});
    check_error([&] { g.slice(x, {{2}, {1}, {1}, {}}); }, E::ShapeMismatch, {"no element of axis 1", "[2, 3]"});
    check_error([&] { g.slice(x, {{0, 0, 0}, {1, 1, 1}, {}, {}}); }, E::InvalidArgument, {"3 axes", "rank-2"});
    const std::int64_t wrong[] = {1, 1}, zero[] = {3, 0};
    check_error([&] { g.split(x, 1, wrong); }, E::ShapeMismatch, {"[1, 1]", "axis 1", "(3)"});
    check_error([&] { g.split(x, 1, zero); }, E::ShapeMismatch, {"[3, 0]"});
    check_error([&] { g.split(x, 2, wrong); }, E::InvalidArgument, {"axis 2"});
    check_error([&] { g.pad(x, {{1, 1}}); }, E::InvalidArgument, {"[1, 1]", "4 entries"});
    check_error([&] { g.pad(x, {{0, 3, 0, 0}, PadMode::Reflect}); }, E::InvalidArgument, {"reflect", "[0, 3, 0, 0]"});
    check_error([&] { g.pad(x, {{0, -1, 0, 0}, PadMode::Edge}); }, E::InvalidArgument, {"negative", "constant"});
    check_error([&] { g.pad(x, {{-2, 0, 0, 0}}); }, E::ShapeMismatch, {"[0, 3]"});
    check_error([&] { g.pad(x, {{0, 0, 0, 0}, static_cast<PadMode>(7)}); }, E::InvalidArgument, {"mode 7"});
    check_error([&] { g.expand(x, {4, 3}); }, E::ShapeMismatch, {"[2, 3]", "[4, 3]"});
    check_error([&] { g.expand(x, {0, 3}); }, E::ShapeMismatch, {"[0, 3]"});
    check_error([&] { g.expand(g.input("one", {1}), {2, 0}); }, E::ShapeMismatch, {"dimension 0"});
  }


  TEST_CASE("bad input: rank 0 shape") {
    Graph g;
    check_error([&] { g.input("x", {}); }, E::ShapeMismatch, {"'x'", "rank 0"});
  }

  TEST_CASE("bad input: zero or negative dimension") {
    Graph g;
    check_error([&] { g.input("x", {2, 0}); }, E::ShapeMismatch, {"[2, 0]", "dimension 0"});
    check_error([&] { g.input("y", {-3}); }, E::ShapeMismatch, {"[-3]", "dimension -3"});
  }

  TEST_CASE("bad input: byte size overflow") {
    Graph g;
    const std::int64_t big = std::int64_t{1} << 31;
    check_error([&] { g.input("x", {big, big, 4}); }, E::Overflow, {"'x'", "[2147483648, 2147483648, 4]"});
    check_error([&] { g.input("y", {std::numeric_limits<std::int64_t>::max()}); }, E::Overflow, {"'y'"});
    // A result can overflow too: the outer product of two huge vectors.
    const Tensor a = g.input("a", {big, 1}), b = g.input("b", {1, big});
    check_error([&] { g.mul(a, b, "outer"); }, E::Overflow, {"outer"});
  }

  TEST_CASE("bad input: element count overflows 64 bits") {
    Graph g;
    const std::int64_t big = std::int64_t{1} << 32;
    check_error([&] { g.input("x", {big, big}); }, E::Overflow, {"'x'", "[4294967296, 4294967296]"});
    check_error([&] { g.input("y", {std::int64_t{1} << 62, 4}, DType::f16); }, E::Overflow, {"[4611686018427387904, 4]"});
    check_error([&] { g.reshape(g.input("z", {4}), {big, big, 1}); }, E::Overflow, {"[4294967296, 4294967296, 1]"});
  }

  TEST_CASE("bad input: results whose size overflows") {
    Graph g;
    const std::int64_t big = std::int64_t{1} << 31;
    check_error([&] { g.matmul(g.input("a", {big, 1}), g.input("b", {1, big}), {}, "mm"); }, E::Overflow,
                {"'mm'", "[2147483648, 2147483648]"});
    const std::int64_t side = std::int64_t{1} << 29;  // the input fits, 8 filters make the result too large
    check_error([&] { g.conv2d(g.input("x", {1, 1, side, side}), g.input("w", {8, 1, 1, 1}), {}, {}, "conv"); },
                E::Overflow, {"'conv'", "[1, 8, 536870912, 536870912]"});
    // Each part fits; joined, the axis is longer than an int64 can count.
    const std::int64_t part = (std::int64_t{1} << 60) - 1;
    const Tensor p = g.input("p", {part}, DType::f16);
    check_error([&] { g.concat(std::vector<Tensor>(2, p), 0, "two"); }, E::Overflow, {"'two'", "[2305843009213693950]"});
    check_error([&] { g.concat(std::vector<Tensor>(9, p), 0, "nine"); }, E::Overflow, {"'nine'", "input 8", "axis 0"});
  }

  TEST_CASE("limits: huge but valid shapes are described, never allocated, at build time") {
    Graph g;
    const Tensor y = g.matmul(g.input("a", {std::int64_t{1} << 40, 1, 1}), g.input("b", {1, 1}));  // 2^40 batches
    CHECK(g.shape(y) == Shape{std::int64_t{1} << 40, 1, 1});
    CHECK(g.shape(g.input("wide", {std::int64_t{1} << 59}, DType::f16)) == Shape{std::int64_t{1} << 59});
  }

  TEST_CASE("bad input: result rank above 8") {
    Graph g;
    check_error([&] { g.reshape(g.input("x", {1}), Shape(9, 1), "r9"); }, E::ShapeMismatch, {"'r9'", "rank 9"});
  }

  TEST_CASE("bad input: absurd conv2d parameters") {
    Graph g;
    const Tensor x = g.input("x", {1, 2, 8, 8}), w = g.input("w", {2, 2, 3, 3});
    constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
    check_error([&] { g.conv2d(x, w, {.stride = {std::int64_t{1} << 40, 1}}); }, E::InvalidArgument,
                {"stride [1099511627776, 1]"});
    check_error([&] { g.conv2d(x, w, {.pad = {0, 0, max, 0}}); }, E::InvalidArgument, {"[0, 0, 9223372036854775807, 0]"});
    check_error([&] { g.conv2d(x, w, {.dilation = {max, max}}); }, E::InvalidArgument, {"dilation [9223372036854775807"});
    check_error([&] { g.conv2d(x, g.input("wk", {2, 2, std::int64_t{1} << 32, 1})); }, E::InvalidArgument,
                {"kernel [4294967296, 1]"});
    check_error([&] { g.conv2d(x, w, {.groups = max}); }, E::InvalidArgument, {"groups 9223372036854775807"});
    check_error([&] { g.conv2d(x, w, {.groups = -2}); }, E::InvalidArgument, {"groups -2"});
    // At the limits each value is accepted, and the output size comes out right.
    CHECK(g.shape(g.conv2d(x, g.input("w1", {2, 2, 1, 1}), {.stride = {std::int64_t{1} << 31, 1},
                                                            .pad = {std::int64_t{1} << 31, 0, 0, 0}})) ==
          Shape{1, 2, 2, 8});
  }

  TEST_CASE("bad input: absurd pooling parameters") {
    Graph g;
    const Tensor x = g.input("x", {1, 1, 8, 8});
    constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
    constexpr std::int64_t min = std::numeric_limits<std::int64_t>::min();
    check_error([&] { g.max_pool2d(x, {.kernel = {max, 1}}); }, E::InvalidArgument, {"kernel [9223372036854775807, 1]"});
    check_error([&] { g.avg_pool2d(x, {.kernel = {2, 2}, .stride = {min, 1}}); }, E::InvalidArgument,
                {"stride [-9223372036854775808, 1]"});
    check_error([&] { g.max_pool2d(x, {.kernel = {2, 2}, .dilation = {1, std::int64_t{1} << 32}}); }, E::InvalidArgument,
                {"dilation [1, 4294967296]"});
  }

  TEST_CASE("bad input: a dtype value that names no dtype") {
    Graph g;
    check_error([&] { g.input("x", {2}, static_cast<DType>(7)); }, E::InvalidArgument, {"'x'", "dtype 7"});
    check_error([&] { g.constant_bytes("c", {1}, static_cast<DType>(9), std::span<const std::byte>{}); }, E::InvalidArgument, {"dtype 9"});
    check_error([&] { g.cast(g.input("y", {2}), static_cast<DType>(200), "to200"); }, E::InvalidArgument,
                {"'to200'", "dtype 200"});
  }

  TEST_CASE("bad input: an activation value that names no activation") {
    Graph g;
    const Tensor a = g.input("a", {2, 2});
    check_error([&] { g.gemm(a, a, {.activation = static_cast<Activation>(42)}, {}, "fc"); }, E::InvalidArgument,
                {"'fc'", "activation 42"});
    check_error([&] { g.conv2d(g.input("x", {1, 1, 2, 2}), g.input("w", {1, 1, 1, 1}),
                               {.activation = static_cast<Activation>(9)}); },
                E::InvalidArgument, {"activation 9"});
  }

  TEST_CASE("bad input: rank above 8") {
    Graph g;
    check_error([&] { g.input("x", Shape(9, 1)); }, E::ShapeMismatch, {"rank 9", "8"});
  }

  TEST_CASE("bad input: matmul and gemm inner dimensions differ") {
    Graph g;
    const Tensor a = g.input("a", {2, 3}), b = g.input("b", {4, 5});
    check_error([&] { g.matmul(a, b, {}, "mm"); }, E::ShapeMismatch, {"mm", "K=3", "K=4"});
    check_error([&] { g.matmul(a, b, {.trans_a = true}); }, E::ShapeMismatch, {"K=2", "K=4", "transposed"});
    check_error([&] { g.gemm(a, b, {}, {}, "fc"); }, E::ShapeMismatch, {"fc", "K=3", "K=4"});
    check_error([&] { g.gemm(g.input("v", {3}), b); }, E::ShapeMismatch, {"[3]", "2-D"});
  }

  TEST_CASE("bad input: matmul batch dims do not broadcast") {
    Graph g;
    check_error([&] { g.matmul(g.input("a", {2, 3, 4}), g.input("b", {3, 4, 5})); }, E::ShapeMismatch,
                {"[2]", "[3]", "batch"});
  }

  TEST_CASE("bad input: transposed vector operand") {
    Graph g;
    const Tensor v = g.input("v", {3}), m = g.input("m", {3, 4});
    check_error([&] { g.matmul(v, m, {.trans_a = true}); }, E::InvalidArgument, {"vector"});
    check_error([&] { g.matmul(m, g.input("u", {4}), {.trans_b = true}); }, E::InvalidArgument, {"vector"});
  }

  TEST_CASE("bad input: gemm C does not broadcast to [M, N]") {
    Graph g;
    const Tensor a = g.input("a", {2, 3}), b = g.input("b", {3, 4});
    check_error([&] { g.gemm(a, b, {}, g.input("c", {3})); }, E::ShapeMismatch, {"[3]", "[2, 4]"});
    check_error([&] { g.gemm(a, b, {}, g.input("d", {2, 4, 1})); }, E::ShapeMismatch, {"[2, 4, 1]"});
    check_error([&] { g.gemm(a, b, {}, g.input("e", {4, 4})); }, E::ShapeMismatch, {"[4, 4]"});
  }

  TEST_CASE("bad input: non-finite gemm alpha or beta") {
    Graph g;
    const Tensor a = g.input("a", {2, 3}), b = g.input("b", {3, 4});
    check_error([&] { g.gemm(a, b, {.alpha = INFINITY}); }, E::InvalidArgument, {"alpha"});
    check_error([&] { g.gemm(a, b, {.beta = NAN}); }, E::InvalidArgument, {"beta"});
  }

  TEST_CASE("bad input: conv2d operands of the wrong rank") {
    Graph g;
    const Tensor w = g.input("w", {2, 3, 3, 3});
    check_error([&] { g.conv2d(g.input("x3", {3, 8, 8}), w); }, E::ShapeMismatch, {"[3, 8, 8]", "4-D"});
    check_error([&] { g.conv2d(g.input("x", {1, 3, 8, 8}), g.input("w2", {2, 27})); }, E::ShapeMismatch,
                {"[2, 27]", "4-D"});
  }

  TEST_CASE("bad input: conv2d groups that do not divide the channels") {
    Graph g;
    const Tensor x = g.input("x", {1, 6, 8, 8});
    check_error([&] { g.conv2d(x, g.input("w", {4, 2, 3, 3}), {.groups = 4}); }, E::InvalidArgument,
                {"groups 4", "6"});
    check_error([&] { g.conv2d(x, g.input("w5", {5, 3, 3, 3}), {.groups = 2}); }, E::InvalidArgument,
                {"groups 2", "5"});
    check_error([&] { g.conv2d(x, g.input("w0", {4, 6, 3, 3}), {.groups = 0}); }, E::InvalidArgument, {"groups 0"});
  }

  TEST_CASE("bad input: conv2d weight channels do not match the input") {
    Graph g;
    const Tensor x = g.input("x", {1, 6, 8, 8});
    check_error([&] { g.conv2d(x, g.input("w", {4, 4, 3, 3})); }, E::ShapeMismatch, {"[4, 4, 3, 3]", "6"});
    check_error([&] { g.conv2d(x, g.input("wg", {4, 6, 3, 3}), {.groups = 2}); }, E::ShapeMismatch,
                {"[4, 6, 3, 3]", "3"});
  }

  TEST_CASE("bad input: conv2d kernel larger than the padded input") {
    Graph g;
    const Tensor x = g.input("x", {1, 1, 3, 3});
    check_error([&] { g.conv2d(x, g.input("w", {1, 1, 5, 5})); }, E::ShapeMismatch, {"[5, 5]", "[1, 1, 3, 3]"});
    check_error([&] { g.conv2d(x, g.input("wd", {1, 1, 2, 2}), {.dilation = {3, 3}}); }, E::ShapeMismatch,
                {"[4, 4]"});
    CHECK(g.shape(g.conv2d(x, g.input("wp", {1, 1, 5, 5}), {.pad = {1, 1, 1, 1}})) == Shape{1, 1, 1, 1});
  }

  TEST_CASE("bad input: negative padding") {
    Graph g;
    const Tensor x = g.input("x", {1, 1, 8, 8});
    check_error([&] { g.conv2d(x, g.input("w", {1, 1, 3, 3}), {.pad = {0, -1, 0, 0}}); }, E::InvalidArgument,
                {"[0, -1, 0, 0]"});
    check_error([&] { g.max_pool2d(x, {.kernel = {2, 2}, .pad = {-2, 0, 0, 0}}); }, E::InvalidArgument,
                {"[-2, 0, 0, 0]"});
  }

  TEST_CASE("bad input: zero stride, dilation or kernel") {
    Graph g;
    const Tensor x = g.input("x", {1, 1, 8, 8}), w = g.input("w", {1, 1, 3, 3});
    check_error([&] { g.conv2d(x, w, {.stride = {0, 1}}); }, E::InvalidArgument, {"stride [0, 1]"});
    check_error([&] { g.conv2d(x, w, {.dilation = {1, 0}}); }, E::InvalidArgument, {"dilation [1, 0]"});
    check_error([&] { g.avg_pool2d(x, {.kernel = {2, 2}, .stride = {1, -1}}); }, E::InvalidArgument, {"[1, -1]"});
    check_error([&] { g.max_pool2d(x, {.kernel = {0, 2}}); }, E::InvalidArgument, {"kernel [0, 2]"});
  }

  TEST_CASE("bad input: conv2d bias of the wrong size") {
    Graph g;
    const Tensor x = g.input("x", {1, 3, 8, 8}), w = g.input("w", {4, 3, 3, 3});
    check_error([&] { g.conv2d(x, w, {}, g.input("b", {3})); }, E::ShapeMismatch, {"[3]", "[4]"});
    check_error([&] { g.conv2d(x, w, {}, g.input("b2", {1, 4})); }, E::ShapeMismatch, {"[1, 4]"});
  }

  TEST_CASE("bad input: conv2d residual of another shape than the output") {
    Graph g;
    const Tensor x = g.input("x", {1, 3, 8, 8}), w = g.input("w", {4, 3, 3, 3});
    check_error([&] { g.conv2d(x, w, {}, {}, "c", g.input("r", {1, 4, 8, 8})); }, E::ShapeMismatch,
                {"'c'", "residual [1, 4, 8, 8]", "[1, 4, 6, 6]"});
    const Tensor y = g.conv2d(x, w, {}, {}, "ok", g.input("r2", {1, 4, 6, 6}));
    CHECK(std::get<Conv2dParams>(producer(g, y).params).residual);
    CHECK(producer(g, y).inputs.size() == 3);
  }

  TEST_CASE("bad input: operands of mixed dtypes") {
    Graph g;
    const Tensor a = g.input("a", {2, 2}), h = g.input("h", {2, 2}, DType::f16);
    check_error([&] { g.add(a, h); }, E::DTypeMismatch, {"f32", "f16", "(h)", "cast"});
    check_error([&] { g.matmul(a, h); }, E::DTypeMismatch, {"f32", "f16"});
    check_error([&] { g.gemm(a, a, {}, g.input("c", {2}, DType::bf16)); }, E::DTypeMismatch, {"bf16"});
    check_error([&] { g.conv2d(g.input("x", {1, 1, 4, 4}), g.input("w", {1, 1, 2, 2}, DType::bf16)); },
                E::DTypeMismatch, {"bf16"});
    const Tensor parts[] = {a, h};
    check_error([&] { g.concat(parts, 0); }, E::DTypeMismatch, {"f16"});
  }

  TEST_CASE("bad input: shapes that do not broadcast") {
    Graph g;
    check_error([&] { g.add(g.input("a", {2, 3}), g.input("b", {4, 3}), "sum"); }, E::ShapeMismatch,
                {"sum", "[2, 3]", "[4, 3]"});
    check_error([&] { g.div(g.input("c", {3}), g.input("d", {4})); }, E::ShapeMismatch, {"[3]", "[4]"});
  }

  TEST_CASE("bad input: clip bounds reversed or NaN") {
    Graph g;
    const Tensor x = g.input("x", {3});
    check_error([&] { g.clip(x, 2.0f, 1.0f); }, E::InvalidArgument, {"2.0", "1.0", "min <= max"});
    check_error([&] { g.clip(x, NAN, 1.0f); }, E::InvalidArgument, {"nan"});
    check_error([&] { g.clip(x, 0.0f, NAN); }, E::InvalidArgument, {"nan"});
  }

  TEST_CASE("bad input: batchnorm parameter shapes") {
    Graph g;
    const Tensor x = g.input("x", {2, 4, 3, 3}), c = g.input("c", {4}), s3 = g.input("scale3", {3});
    check_error([&] { g.batchnorm(x, s3, c, c, c); }, E::ShapeMismatch, {"scale3", "[3]", "[4]"});
    check_error([&] { g.batchnorm(x, c, c, c, g.input("var", {4, 1})); }, E::ShapeMismatch, {"var", "[4, 1]"});
    check_error([&] { g.batchnorm(g.input("v", {4}), c, c, c, c); }, E::ShapeMismatch, {"[4]", "channel"});
  }

  TEST_CASE("bad input: negative or non-finite batchnorm epsilon") {
    Graph g;
    const Tensor x = g.input("x", {1, 2}), c = g.input("c", {2});
    check_error([&] { g.batchnorm(x, c, c, c, c, {.epsilon = -1e-5f}); }, E::InvalidArgument, {"epsilon", "-0.00001"});
    check_error([&] { g.batchnorm(x, c, c, c, c, {.epsilon = NAN}); }, E::InvalidArgument, {"epsilon"});
    check_error([&] { g.batchnorm(x, c, c, c, c, {.epsilon = INFINITY}); }, E::InvalidArgument, {"epsilon"});
  }

  TEST_CASE("bad input: pooling padding not below the window") {
    Graph g;
    const Tensor x = g.input("x", {1, 1, 8, 8});
    check_error([&] { g.max_pool2d(x, {.kernel = {2, 2}, .pad = {2, 0, 0, 0}}); }, E::InvalidArgument,
                {"[2, 0, 0, 0]", "window 2"});
    check_error([&] { g.avg_pool2d(x, {.kernel = {3, 3}, .pad = {0, 0, 0, 3}}); }, E::InvalidArgument,
                {"[0, 0, 0, 3]", "window 3"});
    check_error([&] { g.max_pool2d(x, {.kernel = {9, 9}}); }, E::ShapeMismatch, {"[9, 9]", "[1, 1, 8, 8]"});
    check_error([&] { g.global_avg_pool(g.input("v", {2, 3})); }, E::ShapeMismatch, {"[2, 3]", "4-D"});
  }

  TEST_CASE("bad input: softmax axis out of range") {
    Graph g;
    const Tensor x = g.input("x", {2, 3});
    check_error([&] { g.softmax(x, 2); }, E::InvalidArgument, {"axis 2", "[-2, 1]"});
    check_error([&] { g.softmax(x, -3); }, E::InvalidArgument, {"axis -3"});
    check_error([&] { g.flatten(x, 3); }, E::InvalidArgument, {"axis 3"});
  }

  TEST_CASE("bad input: reshape targets") {
    Graph g;
    const Tensor x = g.input("x", {2, 3, 4});
    check_error([&] { g.reshape(x, {-1, -1}); }, E::InvalidArgument, {"more than one -1"});
    check_error([&] { g.reshape(x, {5, 5}); }, E::ShapeMismatch, {"24", "[5, 5]", "25"});
    check_error([&] { g.reshape(x, {-1, 5}); }, E::ShapeMismatch, {"-1", "24", "5"});
    check_error([&] { g.reshape(x, {2, 3, 4, 0}); }, E::ShapeMismatch, {"dimension 3", "rank 3"});
    check_error([&] { g.reshape(x, {-2, 12}); }, E::InvalidArgument, {"-2"});
  }

  TEST_CASE("bad input: transpose perm that is not a permutation") {
    Graph g;
    const Tensor x = g.input("x", {2, 3});
    check_error([&] { g.transpose(x, {0, 0}); }, E::InvalidArgument, {"[0, 0]", "[2, 3]"});
    check_error([&] { g.transpose(x, {0, 2}); }, E::InvalidArgument, {"[0, 2]"});
    check_error([&] { g.transpose(x, {0}); }, E::InvalidArgument, {"[0]"});
    check_error([&] { g.transpose(x, {1, 0, 2}); }, E::InvalidArgument, {"[1, 0, 2]"});
  }

  TEST_CASE("bad input: concat of mismatched or no inputs") {
    Graph g;
    const Tensor a = g.input("a", {2, 3}), b = g.input("b", {4, 4}), r = g.input("r", {2, 3, 1});
    const Tensor ab[] = {a, b};
    check_error([&] { g.concat(ab, 0); }, E::ShapeMismatch, {"input 1", "[4, 4]", "[2, 3]"});
    const Tensor ar[] = {a, r};
    check_error([&] { g.concat(ar, 1); }, E::ShapeMismatch, {"[2, 3, 1]"});
    check_error([&] { g.concat({}, 0, "empty"); }, E::InvalidArgument, {"empty", "at least one"});
    const Tensor aa[] = {a, a};
    check_error([&] { g.concat(aa, 2); }, E::InvalidArgument, {"axis 2"});
  }

  TEST_CASE("bad input: duplicate names") {
    Graph g;
    const Tensor x = g.input("x", {2});
    check_error([&] { g.input("x", {3}); }, E::InvalidArgument, {"'x'", "already used"});
    check_error([&] { g.constant("x", {1}, ones(1)); }, E::InvalidArgument, {"'x'"});
    g.relu(x, "act");
    check_error([&] { g.sigmoid(x, "act"); }, E::InvalidArgument, {"'act'"});
    check_error([&] { g.input("act", {1}); }, E::InvalidArgument, {"'act'"});
    check_error([&] { g.clip(x, 0, 1, "x"); }, E::InvalidArgument, {"'x'"});
    g.output("y", x);
    check_error([&] { g.output("y", x); }, E::InvalidArgument, {"'y'", "already defined"});
  }

  TEST_CASE("bad input: empty names") {
    Graph g;
    check_error([&] { g.input("", {2}); }, E::InvalidArgument, {"non-empty name"});
    check_error([&] { g.constant("", {1}, ones(1)); }, E::InvalidArgument, {"non-empty name"});
    check_error([&] { g.output("", g.input("x", {2})); }, E::InvalidArgument, {"non-empty name"});
  }

  TEST_CASE("bad input: a tensor handle of another graph") {
    Graph g, big;
    const Tensor x = g.input("x", {2});
    for (const char* name : {"t0", "t1", "t2", "t3", "t4"}) big.input(name, {2});
    const Tensor foreign = big.relu(big.input("u", {2}));
    check_error([&] { g.relu(foreign); }, E::NotFound, {std::to_string(foreign.id), "1 tensors"});
    check_error([&] { g.add(x, Tensor{}); }, E::NotFound, {"-1"});
    check_error([&] { g.output("y", Tensor{42}); }, E::NotFound, {"42"});
    check_error([&] { g.info(Tensor{7}); }, E::NotFound, {"7"});
  }

  TEST_CASE("bad input: strided input strides of the wrong rank or sign") {
    Graph g;
    check_error([&] { g.input("x", {2, 3}, DType::f32, {1}); }, E::ShapeMismatch, {"[1]", "[2, 3]", "rank 1"});
    check_error([&] { g.input("y", {2, 3}, DType::f32, {3, -1}); }, E::InvalidArgument, {"-1", "negative"});
    const std::int64_t huge = std::int64_t{1} << 62;
    check_error([&] { g.input("z", {4, 3}, DType::f32, {huge, 1}); }, E::Overflow, {"'z'"});
  }

  TEST_CASE("bad input: constant value count does not match its shape") {
    Graph g;
    check_error([&] { g.constant("w", {2, 3}, ones(5)); }, E::ShapeMismatch, {"'w'", "[2, 3]", "6", "5"});
    const std::byte bytes[6] = {};
    check_error([&] { g.constant_bytes("b", {2}, DType::f32, bytes); }, E::ShapeMismatch, {"'b'", "8", "6"});
  }

  TEST_CASE("bad input: compile a graph without outputs") {
    Graph g;
    g.relu(g.input("x", {2}));
    check_error([&] { Device::open("ref").compile(g); }, E::InvalidArgument, {"no outputs", "Graph::output"});
  }

  TEST_CASE("bad input: unknown input or output names and wrong input sizes") {
    Graph g;
    g.output("y", g.relu(g.input("x", {2, 3})));
    Executable exe = Device::open("ref").compile(g);
    const std::vector<float> six(6, 1.0f), five(5, 1.0f);
    check_error([&] { exe.set_input("nope", six); }, E::NotFound, {"'nope'", "x"});
    check_error([&] { exe.set_input("x", five); }, E::ShapeMismatch, {"'x'", "6", "5"});
    const std::vector<std::byte> bytes(10);
    check_error([&] { exe.set_input_bytes("x", bytes); }, E::ShapeMismatch, {"'x'", "6 f32 values"});
    exe.set_input("x", six);
    exe.run();
    check_error([&] { exe.output("z"); }, E::NotFound, {"'z'", "y"});
    check_error([&] { exe.output_bytes("x"); }, E::NotFound, {"'x'"});
    check_error([&] { exe.input_desc("y"); }, E::NotFound, {"'y'"});
  }

  TEST_CASE("bad input: device specs") {
    check_error([] { Device::open("warp9"); }, E::NotFound, {"warp9", "ref", "cpu"});
    check_error([] { Device::open("cpu:threads=0"); }, E::InvalidArgument, {"threads=0"});
    check_error([] { Device::open("cpu:threads=x"); }, E::InvalidArgument, {"threads=x"});
    check_error([] { Device::open("cpu:threads=2,color=red"); }, E::InvalidArgument, {"color"});
    check_error([] { Device::open("cpu:1"); }, E::NotFound, {"cpu:1"});
    check_error([] { Device::open("ref:3"); }, E::InvalidArgument, {"ref:3"});
    check_error([] { Device::open(":0"); }, E::InvalidArgument, {"':0'", "no backend"});
    check_error([] { Device::open("cpu::"); }, E::InvalidArgument, {"'cpu::'", "empty field"});
    check_error([] { Device::open(""); }, E::InvalidArgument, {"no backend"});
  }

  TEST_CASE("bad input: unknown dtype names") {
    for (const char* bad : {"fp16", "F32", "", "bfloat16", "f64"})
      check_error([&] { parse_dtype(bad); }, E::InvalidArgument, {"f32, f16, bf16, i64, i32 or bool"});
  }
}

}  // namespace porta::test
