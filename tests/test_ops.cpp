// The differential harness: every op case on every device under test, against the ref oracle.
// PORTA_TEST_DEVICES   device specs separated by ',' or ';' (default: every device of this build)
// PORTA_TEST_SEED      seed of inputs and weights (default fixed; printed so a failure can be rerun)
// PORTA_TEST_CASES     only cases whose name contains this text, e.g. "conv2d/" or "/bf16", or starts
//                      with it after a '^' ("^mul/": mul's cases, not matmul's); several separated by '|' 
// PORTA_TEST_VERBOSE   when set, print every case's nmse and max abs error
// PORTA_TEST_IMPL      native (default) or vendor: the devices' vendor library providers
// PORTA_TEST_TF32      1: compile with allow_tf32, f32 products judged by tf32's precision
// PORTA_REQUIRE_DEVICES 1: a device under test that is missing, or runs none of the cases, fails instead of
//                      skipping, for machines where it must be there (the opencl suite's device too)
// A run in which no case ran on any device ends with a line "SKIPPED: <why>": CTest reports it as Skipped.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "op_cases/op_cases.hpp"
#include "op_cases/verify.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

std::uint64_t test_seed() {
  const std::string text = env("PORTA_TEST_SEED");
  return text.empty() ? 20261130 : std::stoull(text, nullptr, 0);
}

// The op and the device's reason, without the node's name, so that equal reasons group together.
std::string unsupported_reason(const Device& device, const Graph& graph, const CompileOptions& options) {
  for (const Node& node : graph.nodes()) {
    std::string reason = device.unsupported_reason(graph, node, options);
    if (!reason.empty()) return std::string(to_string(node.op)) + ": " + reason;
  }
  return {};
}

}  // namespace

TEST_CASE("the case registry covers every op and dtype with unique, well-formed names") {
  const auto cases = cases::all_cases();
  std::set<std::string> names;
  std::map<std::pair<OpKind, DType>, int> per_op_dtype;
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(names.insert(c.name).second);
    CHECK(c.name.rfind(std::string(to_string(c.op)) + "/", 0) == 0);
    CHECK(c.name.ends_with(to_string(c.dtype)));
    CHECK(c.name[c.name.size() - to_string(c.dtype).size() - 1] == '/');
    ++per_op_dtype[{c.op, c.dtype}];
  }
  // Every op in every float dtype but the logical ops, which take bool only; the ops that take
  // integer and bool tensors in those too.
  const auto covered = [&](OpKind op, DType t) {
    const std::string op_name(to_string(op)), dtype_name(to_string(t));
    CAPTURE(op_name);
    CAPTURE(dtype_name);
    CHECK(per_op_dtype[{op, t}] >= 3);
  };
  for (int op = 0; op < op_kind_count; ++op)
    for (const DType t : all_dtypes)
      if (static_cast<OpKind>(op) != OpKind::Logical) covered(static_cast<OpKind>(op), t);
  for (const OpKind op : {OpKind::Reshape, OpKind::Transpose, OpKind::Concat, OpKind::Cast, OpKind::Slice, OpKind::Pad,
                          OpKind::Expand, OpKind::Gather, OpKind::Compare, OpKind::Where})
    for (const DType t : integer_dtypes) covered(op, t);
  covered(OpKind::Logical, DType::boolean);
  MESSAGE(cases.size() << " op cases");
}

TEST_CASE("every case builds a graph whose outputs have the case's op and dtype") {
  for (const auto& c : cases::all_cases()) {
    CAPTURE(c.name);
    const Graph g = c.build(1);
    REQUIRE(g.outputs().size() == 1);
    const Tensor y = g.outputs()[0].second;
    CHECK(g.dtype(y) == (c.op == OpKind::Compare ? DType::boolean : c.dtype));  // the case dtype: the operands'

    const TensorInfo& info = g.info(y);
    REQUIRE(info.producer >= 0);
    CHECK(g.nodes()[static_cast<std::size_t>(info.producer)].op == c.op);
    // Constants come from the seed: the same seed builds the same weights, another seed others.
    const Graph again = c.build(1), other = c.build(2);
    for (std::size_t t = 0; t < g.tensors().size(); ++t) {
      if (g.tensors()[t].role != Role::Constant || g.tensors()[t].desc.numel() < 4) continue;
      CHECK(*g.tensors()[t].data == *again.tensors()[t].data);
      CHECK(*g.tensors()[t].data != *other.tensors()[t].data);
    }
  }
}

TEST_CASE("compare: nmse, max abs error and non-finite values") {
  const float want[] = {1.0f, -2.0f, 3.0f, 0.5f};
  const float same[] = {1.0f, -2.0f, 3.0f, 0.5f};
  const float off[] = {1.0f, -2.0f, 3.5f, 0.5f};
  const float nan[] = {1.0f, NAN, 3.0f, INFINITY};
  CHECK(cases::compare(same, want).nmse == 0.0);
  const auto c = cases::compare(off, want);
  CHECK(c.nmse == doctest::Approx(0.25 / 14.25));
  CHECK(c.max_abs == doctest::Approx(0.5));
  CHECK(c.worst == 2);
  CHECK(c.want_max_abs == 3.0);
  const auto n = cases::compare(nan, want);
  CHECK(n.non_finite == 2);
  CHECK(n.worst == 1);
  const float shorter[] = {1.0f};
  check_error([&] { cases::compare(shorter, want); }, ErrorCode::InvalidArgument, {"1", "4"});
  for (int op = 0; op < op_kind_count; ++op) {
    CHECK(cases::nmse_threshold(static_cast<OpKind>(op), DType::f32) <= 1e-9);
    CHECK(cases::nmse_threshold(static_cast<OpKind>(op), DType::f32) <=
          cases::nmse_threshold(static_cast<OpKind>(op), DType::bf16));
  }
  CHECK(cases::nmse_threshold(OpKind::Cast, DType::f16) == 0.0);
  CHECK(cases::nmse_threshold(OpKind::Transpose, DType::bf16) == 0.0);
}

TEST_CASE("check_output: an output smaller than Limits::scale is judged as if it were that large") {
  const float zeros[] = {0.0f, 0.0f}, tiny[] = {1e-7f, 0.0f}, off[] = {0.1f, 0.0f};
  const auto passes = [&](const cases::Limits& limits, std::span<const float> got) {
    cases::Verification v;
    v.passed = true;
    cases::check_output(v, "y", {2}, DType::f32, limits, got, zeros);
    return v.passed;
  };
  CHECK_FALSE(passes({.nmse = 1e-10, .max_abs = 1e-5}, tiny));  // relative to zeros: any error is infinite
  CHECK(passes({.nmse = 1e-10, .max_abs = 1e-5, .scale = 1.0}, tiny));
  CHECK_FALSE(passes({.nmse = 1e-10, .max_abs = 1e-5, .scale = 1.0}, off));
}

TEST_CASE("random_values: reproducible, in range, never zero") {
  const auto a = cases::random_values(1000, 7, -1.0f, 1.0f), b = cases::random_values(1000, 7, -1.0f, 1.0f);
  CHECK(a == b);
  CHECK(a != cases::random_values(1000, 8, -1.0f, 1.0f));
  double sum = 0.0;
  for (const float v : a) {
    CHECK(v >= -1.0f);
    CHECK(v < 1.0f);
    CHECK(v != 0.0f);
    sum += v;
  }
  CHECK(std::abs(sum / 1000.0) < 0.1);  // roughly centred
  for (const float v : cases::random_values(100, 1, 2.0f, 3.0f)) CHECK((v >= 2.0f && v < 3.0f));
}

TEST_CASE("verify_against_ref passes ref against itself and names failing outputs") {
  const Device ref = Device::open("ref");
  Graph g;
  g.output("y", g.relu(g.input("x", {4, 5})));
  const auto v = cases::verify_against_ref(g, ref, OpKind::Relu, 3);
  CHECK(v.passed);
  CHECK(v.nmse == 0.0);
  CHECK(v.detail.empty());
}

TEST_SUITE("ops") {
  TEST_CASE("every op case matches the reference on every device under test") {
    const std::uint64_t seed = test_seed();
    MESSAGE("seed " << seed << " (set PORTA_TEST_SEED to change it)");
    const std::string filter = env("PORTA_TEST_CASES");
    const bool verbose = !env("PORTA_TEST_VERBOSE").empty();
    std::vector<cases::OpCase> selected;
    for (auto& c : cases::all_cases())
      if (case_selected(c.name, filter)) selected.push_back(std::move(c));
    REQUIRE_MESSAGE(!selected.empty(), "no case matches PORTA_TEST_CASES='" << filter << "'");

    const CompileOptions options = options_under_test();
    const auto specs = devices_under_test();
    std::vector<std::string> untested;  // why each device ran no case
    if (specs.empty()) untested.push_back("no device under test");
    int ran = 0;  // cases run, on all devices together
    for (const std::string& spec : specs) {
      CAPTURE(spec);
      const std::optional<Device> device = open_or_skip(spec, untested);
      if (!device) continue;
      int passed = 0, failed = 0;
      std::map<std::string, int> skipped;  // by reason, so a device without bf16 says so once
      for (const auto& c : selected) {
        CAPTURE(c.name);
        CAPTURE(seed);
        const Graph graph = c.build(seed);
        if (const std::string reason = unsupported_reason(*device, graph, options); !reason.empty()) {
          ++skipped[reason];
          continue;
        }
        try {
          const auto v = cases::verify_against_ref(graph, *device, c.op, seed, options);
          CAPTURE(v.nmse);
          CAPTURE(v.max_abs);
          CHECK_MESSAGE(v.passed, c.name << " on " << spec << ": " << v.detail);
          if (verbose) MESSAGE(c.name << " on " << spec << ": nmse " << v.nmse << ", max abs " << v.max_abs);
          v.passed ? ++passed : ++failed;
        } catch (const Error& e) {
          FAIL_CHECK(c.name << " on " << spec << " threw " << std::string(to_string(e.code())) << ": "
                            << std::string(e.what()));
          ++failed;
        }
      }
      int skip_count = 0;
      for (const auto& [reason, count] : skipped) {
        MESSAGE("skipped " << count << " case(s) on " << spec << ": " << reason);
        skip_count += count;
      }
      MESSAGE(spec << ": " << passed << " passed, " << failed << " failed, " << skip_count << " skipped of "
                   << selected.size() << " cases");
      ran += passed + failed;
      if (passed + failed == 0) {
        untested.push_back("device '" + spec + "' runs none of the " + std::to_string(selected.size()) +
                           " cases, e.g. " + skipped.begin()->first);
        skip_device(untested.back());
      }
    }
    if (ran == 0) {
      std::string why;
      for (const std::string& reason : untested) why += (why.empty() ? "" : "; ") + reason;
      skip_reason() = why;
    }
  }
}

}  // namespace porta::test
