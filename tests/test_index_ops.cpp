// Integer and bool tensors, gather, comparisons, logical ops and where: the builder's checks, and
// known answers on ref and cpu (the op-case registry checks every device against ref on random data).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "test_util.hpp"

namespace porta::test {
namespace {

template <class T>
std::span<const std::byte> bytes_of(const std::vector<T>& v) {
  return std::as_bytes(std::span(v));
}

template <class T>
std::vector<T> output_as(const Executable& exe, const std::string& name) {
  const std::vector<std::byte> bytes = exe.output_bytes(name);
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

// The devices these known answers run on: ref, and cpu where the build has it.
std::vector<Device> host_devices() {
  std::vector<Device> devices{Device::open("ref")};
  if (auto cpu = open_or_skip("cpu")) devices.push_back(*cpu);
  return devices;
}

}  // namespace

TEST_SUITE("index_ops") {
  TEST_CASE("arithmetic refuses integer and bool operands; the moving ops take them") {
    Graph g;
    const Tensor ids = g.input("ids", {2, 3}, DType::i64);
    const Tensor mask = g.input("mask", {2, 3}, DType::boolean);
    check_error([&] { g.add(ids, ids); }, ErrorCode::Unsupported, {"add", "'ids'", "i64", "cast them first"});
    check_error([&] { g.relu(mask); }, ErrorCode::Unsupported, {"relu", "'mask'", "bool"});
    check_error([&] { g.matmul(ids, g.transpose(ids, {1, 0})); }, ErrorCode::Unsupported, {"matmul", "i64"});
    CHECK(g.dtype(g.transpose(ids, {1, 0})) == DType::i64);
    CHECK(g.dtype(g.slice(mask, {{1}, {3}, {1}, {}})) == DType::boolean);
    CHECK(g.dtype(g.pad(ids, {{0, 1, 0, 0}, PadMode::Constant, 7.0f})) == DType::i64);
    CHECK(g.dtype(g.cast(ids, DType::f16)) == DType::f16);
  }

  TEST_CASE("builder: gather, compare, logical and where check dtypes and shapes") {
    Graph g;
    const Tensor x = g.input("x", {4, 5, 6});
    const Tensor i = g.input("i", {2, 3}, DType::i32);
    CHECK(g.shape(g.gather(x, i, 1)) == Shape{4, 2, 3, 6});
    CHECK(g.shape(g.gather(x, i, -1)) == Shape{4, 5, 2, 3});
    check_error([&] { g.gather(x, x, 0); }, ErrorCode::DTypeMismatch, {"gather", "'x'", "f32", "i64 or i32"});
    check_error([&] { g.gather(x, i, 3); }, ErrorCode::InvalidArgument, {"gather", "axis 3"});
    const Tensor c = g.less(x, g.input("y", {5, 1}));
    CHECK(g.dtype(c) == DType::boolean);
    CHECK(g.shape(c) == Shape{4, 5, 6});
    check_error([&] { g.equal(x, i); }, ErrorCode::DTypeMismatch, {"compare", "f32", "i32"});
    check_error([&] { g.greater(x, g.input("z", {4})); }, ErrorCode::ShapeMismatch, {"compare", "[4, 5, 6]", "[4]"});
    check_error([&] { g.logical_not(x); }, ErrorCode::DTypeMismatch, {"'x'", "f32", "bool"});
    CHECK(g.shape(g.logical_or(c, g.logical_not(c))) == Shape{4, 5, 6});
    check_error([&] { g.logical(LogicalOp::And, {c}); }, ErrorCode::InvalidArgument, {"logical", "two"});
    const Tensor w = g.where(c, x, g.input("fill", {1}));
    CHECK(g.shape(w) == Shape{4, 5, 6});
    CHECK(g.dtype(w) == DType::f32);
    check_error([&] { g.where(x, x, x); }, ErrorCode::DTypeMismatch, {"where", "condition 'x'", "bool"});
    check_error([&] { g.where(c, x, i); }, ErrorCode::DTypeMismatch, {"where", "f32", "i32"});
  }

  TEST_CASE("gather: rows of an embedding, negative indices wrap, i32 and i64 indices") {
    for (const Device& device : host_devices()) {
      CAPTURE(device.info().spec);
      for (const DType index_dtype : {DType::i64, DType::i32}) {
        Graph g;
        const Tensor table = g.input("table", {4, 3});
        const Tensor ids = g.input("ids", {2, 2}, index_dtype);
        g.output("y", g.gather(table, ids, 0));
        g.output("columns", g.gather(table, g.input("columns", {2}, index_dtype), 1));
        Executable exe = device.compile(g);
        exe.set_input("table", std::vector<float>{0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
        exe.set_input("ids", std::vector<float>{3, -4, 1, -1});  // converted to the index dtype
        exe.set_input("columns", std::vector<float>{2, -3});
        exe.run();
        CHECK(exe.output("y") == std::vector<float>{30, 31, 32, 0, 1, 2, 10, 11, 12, 30, 31, 32});
        CHECK(exe.output("columns") == std::vector<float>{2, 0, 12, 10, 22, 20, 32, 30});
      }
    }
  }

  TEST_CASE("gather: an index out of range is an error of the run, naming the node and the range") {
    for (const Device& device : host_devices()) {
      CAPTURE(device.info().spec);
      Graph g;
      g.output("y", g.gather(g.input("x", {5, 2}), g.input("ids", {3}, DType::i64), 0, "lookup"));
      Executable exe = device.compile(g);
      exe.set_input("x", std::vector<float>(10, 1.0f));
      exe.set_input_bytes("ids", bytes_of(std::vector<std::int64_t>{0, 5, 1}));
      check_error([&] { exe.run(); }, ErrorCode::InvalidArgument, {"gather 'lookup'", "index 5", "[-5, 5)"});
      exe.set_input_bytes("ids", bytes_of(std::vector<std::int64_t>{0, -6, 1}));
      check_error([&] { exe.run(); }, ErrorCode::InvalidArgument, {"index -6"});
      exe.set_input_bytes("ids", bytes_of(std::vector<std::int64_t>{4, -5, 1}));
      exe.run();
      CHECK(exe.output("y") == std::vector<float>(6, 1.0f));
    }
  }

  TEST_CASE("comparisons, logical ops and where: known answers, i64 compared exactly past 2^53") {
    for (const Device& device : host_devices()) {
      CAPTURE(device.info().spec);
      Graph g;
      const Tensor a = g.input("a", {4}, DType::i64), b = g.input("b", {1}, DType::i64);
      const Tensor lt = g.less(a, b), eq = g.equal(a, b);
      g.output("lt", lt);
      g.output("le", g.less_or_equal(a, b));
      g.output("gt", g.greater(a, b));
      g.output("ge", g.greater_or_equal(a, b));
      g.output("not_lt", g.logical_not(lt));
      g.output("and", g.logical_and(lt, eq));
      g.output("or", g.logical_or(lt, eq));
      g.output("pick", g.where(lt, a, g.input("other", {1}, DType::i64)));
      Executable exe = device.compile(g);
      constexpr std::int64_t big = (std::int64_t{1} << 53) + 1;  // rounds to 2^53 as a double
      exe.set_input_bytes("a", bytes_of(std::vector<std::int64_t>{big - 1, big, big + 1, -3}));
      exe.set_input_bytes("b", bytes_of(std::vector<std::int64_t>{big}));
      exe.set_input_bytes("other", bytes_of(std::vector<std::int64_t>{-7}));
      exe.run();
      using Bits = std::vector<std::uint8_t>;
      CHECK(output_as<std::uint8_t>(exe, "lt") == Bits{1, 0, 0, 1});
      CHECK(output_as<std::uint8_t>(exe, "le") == Bits{1, 1, 0, 1});
      CHECK(output_as<std::uint8_t>(exe, "gt") == Bits{0, 0, 1, 0});
      CHECK(output_as<std::uint8_t>(exe, "ge") == Bits{0, 1, 1, 0});
      CHECK(output_as<std::uint8_t>(exe, "not_lt") == Bits{0, 1, 1, 0});
      CHECK(output_as<std::uint8_t>(exe, "and") == Bits{0, 0, 0, 0});
      CHECK(output_as<std::uint8_t>(exe, "or") == Bits{1, 1, 0, 1});
      CHECK(output_as<std::int64_t>(exe, "pick") == std::vector<std::int64_t>{big - 1, -7, -7, -3});
    }
  }

  TEST_CASE("cast: float to integer truncates toward zero (i32 wraps past its range), to bool is != 0, integers "
            "convert exactly; on every device under test") {
    std::vector<std::string> specs{"ref"};
    for (const std::string& spec : devices_under_test())
      if (spec != "ref") specs.push_back(spec);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (const std::string& spec : specs) {
      CAPTURE(spec);
      const std::optional<Device> device = open_or_skip(spec);
      if (!device) continue;
      Graph g;
      const Tensor x = g.input("x", {10});
      g.output("i32", g.cast(x, DType::i32));
      g.output("i64", g.cast(x, DType::i64));
      g.output("bool", g.cast(x, DType::boolean));
      const Tensor wide = g.input("wide", {2}, DType::i64);
      g.output("i64_to_i32", g.cast(wide, DType::i32));
      g.output("i64_to_f32", g.cast(wide, DType::f32));
      std::optional<Executable> compiled;
      try {
        compiled = device->compile(g);
      } catch (const Error& e) {  // a backend without integer kernels (float_only_reason) refuses them
        if (e.code() != ErrorCode::Unsupported) throw;
        MESSAGE("SKIPPED on " << spec << ": " << e.what());
        continue;
      }
      Executable& exe = *compiled;
      exe.set_input("x", std::vector<float>{-2.7f, -0.5f, 0.0f, 0.5f, 2.7f, 1e10f, 3e9f, 1e30f, -1e30f, nan});
      exe.set_input_bytes("wide", bytes_of(std::vector<std::int64_t>{(std::int64_t{1} << 40) + 3, -16777217}));
      exe.run();
      // Past i32's range the low 32 bits of the i64 (saturated past its own range) are kept.
      CHECK(output_as<std::int32_t>(exe, "i32") ==
            std::vector<std::int32_t>{-2, 0, 0, 0, 2, 1410065408, -1294967296, -1, 0, 0});
      using Limits = std::numeric_limits<std::int64_t>;
      CHECK(output_as<std::int64_t>(exe, "i64") ==
            std::vector<std::int64_t>{-2, 0, 0, 0, 2, 10000000000, 3000000000, Limits::max(), Limits::min(), 0});
      CHECK(output_as<std::uint8_t>(exe, "bool") == std::vector<std::uint8_t>{1, 1, 0, 1, 1, 1, 1, 1, 1, 1});
      CHECK(output_as<std::int32_t>(exe, "i64_to_i32") == std::vector<std::int32_t>{3, -16777217});
      CHECK(exe.output("i64_to_f32") == std::vector<float>{0x1p40f, -16777216.0f});
    }
  }
}

}  // namespace porta::test
