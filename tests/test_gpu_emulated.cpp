// The GPU backends' kernels and runtime on the CPU emulation of the GPU API
// (backends/gpu/compat/emulation.hpp), against the reference: every op case run eagerly, then
// captured into a graph, then replayed; plus tf32, profiling, out-of-memory and the device
// description.
// What this cannot show: timing, memory coalescing, and the vendor compilers' own behaviour.
// PORTA_TEST_CASES   only cases whose name contains this text, e.g. "conv2d/", or starts with it
//                    after a '^' (test_util.hpp's case_selected)
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "backends/gpu/plan/launch.hpp"
#include "core/compile/compile.hpp"
#include "core/runtime/executable_impl.hpp"
#include "porta/models.hpp"
#include "op_cases/op_cases.hpp"
#include "op_cases/verify.hpp"
#include "test_util.hpp"

namespace porta::detail::gpu_emulated {
std::unique_ptr<Backend> make_backend();
}

namespace porta::test {
namespace {

using namespace porta::detail;

std::shared_ptr<DeviceImpl> open_emulated() {
  static const std::unique_ptr<Backend> backend = gpu_emulated::make_backend();
  return backend->open(parse_device_spec("gpu-emulated:0"));
}

Executable compile_on(const std::shared_ptr<DeviceImpl>& device, const Graph& g, CompileOptions options = {}) {
  return Executable(std::make_unique<ExecutableImpl>(device, compile_graph(g, *device, options)));
}

// Empty when every output is within the op's tolerance of `want`'s (tf32's where f32 may run as tf32).
std::string mismatch(const Graph& g, const Executable& got, const Executable& want, OpKind op, bool tf32 = false) {
  std::string why;
  for (const auto& [name, t] : g.outputs()) {
    const DType dtype = g.dtype(t);
    const auto c = cases::compare(got.output(name), want.output(name));
    if (c.non_finite > 0) why += name + ": " + std::to_string(c.non_finite) + " non-finite values; ";
    else if (c.nmse > cases::nmse_threshold(op, dtype, tf32)) why += name + ": nmse " + std::to_string(c.nmse) + "; ";
    else if (c.max_abs > cases::max_abs_tolerance(op, dtype, tf32) * c.want_max_abs)
      why += name + ": max abs error " + std::to_string(c.max_abs) + " at " + std::to_string(c.worst) + "; ";
  }
  return why;
}

// Whether a node reads or makes an integer or bool tensor.
bool takes_integers(const Graph& g, const Node& node) {
  return !is_float(g.dtype(node.output)) ||
         std::any_of(node.inputs.begin(), node.inputs.end(), [&](Tensor t) { return !is_float(g.dtype(t)); });
}

// Whether the GPU source lacks the kernel of a node that reads or makes an integer or bool tensor:
// it holds gather, cast, the element movers, the comparisons, the logical ops and where in every
// dtype, and the cross-entropy ops with i64/i32 class labels, no other op yet (float_only_reason).
bool lacks_integer_kernel(const Graph& g, const Node& node) {
  switch (node.op) {
    case OpKind::Gather: case OpKind::Cast: case OpKind::Reshape: case OpKind::Transpose: case OpKind::Slice:
    case OpKind::Concat: case OpKind::Pad: case OpKind::Expand: case OpKind::Compare: case OpKind::Logical:
    case OpKind::Where: return false;
    case OpKind::SoftmaxCrossEntropy: case OpKind::SoftmaxCrossEntropyBackward: return false;  // float logits
    default: return takes_integers(g, node);
  }
}

// Whether g holds a channels-last conv or pool, which the device refuses with a reason (the layout
// pass never moves a graph there for this backend).
bool nchw_only(const std::shared_ptr<DeviceImpl>& device, const Graph& g) {
  return std::any_of(g.nodes().begin(), g.nodes().end(),
                     [&](const Node& node) { return contains(device->unsupported_reason(g, node, {}), "NCHW only"); });
}

// g run on ref with the random inputs of `seed`.
Executable reference(const Graph& g, std::uint64_t seed) {
  Executable want = Device::open("ref").compile(g);
  cases::set_random_inputs(want, g, seed);
  want.run();
  return want;
}

// Runs `got` (compiled from g) once per name in `runs`, with the random inputs of `seed` that `want`
// ran on; checks each run within the op's tolerance of want's (tf32's where f32 may run as tf32).
void check_against(Executable& got, const Executable& want, const Graph& g, std::uint64_t seed, OpKind op,
                   bool tf32 = false, std::initializer_list<const char*> runs = {"once"}) {
  cases::set_random_inputs(got, g, seed);
  for (const char* run : runs) {
    CAPTURE(run);
    got.run();
    const std::string why = mismatch(g, got, want, op, tf32);
    CHECK_MESSAGE(why.empty(), why);
  }
}

}  // namespace

TEST_CASE("emulated gpu: the device describes itself from its properties") {
  const auto device = open_emulated();
  CHECK(device->info().spec == "gpu-emulated:0");
  CHECK(device->info().subgroup_size == 64);  // wave64: nothing may assume 32
  CHECK(device->info().memory_total > 0);
  CHECK(device->info().tf32);  // the emulated matrix units run f32 as tf32
  Graph g;
  g.matmul(g.input("a", {2, 3}), g.input("b", {3, 4}));
  CHECK(device->unsupported_reason(g, g.nodes().back(), {.impl = Impl::Vendor}).find("no gpu-emulated vendor provider") !=
        std::string::npos);
  check_error([] { gpu_emulated::make_backend()->open(parse_device_spec("gpu-emulated:1")); }, ErrorCode::NotFound,
              {"gpu-emulated:1"});
  check_error([] { gpu_emulated::make_backend()->open(parse_device_spec("gpu-emulated:0:graphs=2")); },
              ErrorCode::InvalidArgument, {"graphs"});
}

TEST_CASE("emulated gpu: every op case matches the reference, eager, captured and replayed") {
  const auto device = open_emulated();
  const char* filter = std::getenv("PORTA_TEST_CASES");
  const std::uint64_t seed = 20261130;
  int checked = 0, integer = 0;
  for (const auto& c : cases::all_cases()) {
    if (filter != nullptr && !case_selected(c.name, filter)) continue;
    CAPTURE(c.name);
    const Graph g = c.build(seed);
    if (nchw_only(device, g)) continue;  // every other case must run
    // A case with an integer or bool node the GPU source has no kernel for must be refused; known by
    // its ops and dtypes, so a refusal of anything else fails.
    const auto lacking = [&](const Node& node) { return lacks_integer_kernel(g, node); };
    if (std::any_of(g.nodes().begin(), g.nodes().end(), lacking)) {
      for (const Node& node : g.nodes())
        if (lacking(node)) CHECK_FALSE(device->unsupported_reason(g, node, {}).empty());
      ++integer;
      continue;
    }
    for (const Node& node : g.nodes()) CHECK(device->unsupported_reason(g, node, {}).empty());
    Executable got = compile_on(device, g, {.poison_memory = true});
    check_against(got, reference(g, seed), g, seed, c.op, false, {"eager", "captured", "replayed"});
    ++checked;
  }
  MESSAGE(checked << " op cases on the emulated GPU; " << integer
                  << " integer and bool cases refused (no kernels yet)");
}

TEST_CASE("emulated gpu: every GEMM tile runs every matmul, gemm and conv case, as its plan says") {
  const auto device = open_emulated();
  const char* filter = std::getenv("PORTA_TEST_CASES");
  const std::uint64_t seed = 20261206;
  std::map<std::string, int> ran;  // by tile: the GEMMs and convs its plan named
  for (const auto& c : cases::all_cases()) {
    const bool family = c.op == OpKind::MatMul || c.op == OpKind::Gemm || c.op == OpKind::Conv2d;
    if (!family || (filter != nullptr && !case_selected(c.name, filter))) continue;
    CAPTURE(c.name);
    const Graph g = c.build(seed);
    if (nchw_only(device, g)) continue;
    const Executable want = reference(g, seed);  // once for every tile
    for (const gpu::GemmTile tile : gpu::gemm_tiles) {
      const std::string name = gpu::tile_name(tile);
      CAPTURE(name);
      const ScopedEnv forced("PORTA_GPU_TILE", name);
      // The matrix tiles take f32 only as tf32: with allow_tf32, judged by tf32's precision.
      const bool tf32 = gpu::is_matrix(tile);
      Executable got = compile_on(device, g, {.allow_tf32 = tf32, .poison_memory = true});
      check_against(got, want, g, seed, c.op, tf32);
      for (const NodePlan& plan : got.node_plans()) {
        if (plan.op != c.op || contains(plan.plan, "direct") || contains(plan.plan, "does not apply")) continue;
        CHECK(contains(plan.plan, name));
        ++ran[name];
      }
    }
  }
  for (const gpu::GemmTile tile : gpu::gemm_tiles) {
    const std::string name = gpu::tile_name(tile);
    MESSAGE(name << ": " << ran[name] << " GEMMs and convs");
    if (filter == nullptr) CHECK(ran[name] > 0);
  }
}

TEST_CASE("emulated gpu: f32 products run as tf32 only with allow_tf32, within tf32's precision") {
  const auto device = open_emulated();
  const Device ref = Device::open("ref");
  std::vector<std::pair<OpKind, Graph>> graphs(3);
  {
    Graph& g = graphs[0].second;
    graphs[0].first = OpKind::MatMul;
    g.output("y", g.matmul(g.input("a", {2, 37, 70}), g.input("b", {70, 45})));
  }
  {
    Graph& g = graphs[1].second;
    graphs[1].first = OpKind::Gemm;
    g.output("y", g.gemm(g.input("a", {70, 33}), g.input("b", {45, 70}),
                         {.trans_a = true, .trans_b = true, .alpha = 1.5f, .beta = 0.5f, .activation = Activation::Relu},
                         g.input("c", {45})));
  }
  {
    Graph& g = graphs[2].second;
    graphs[2].first = OpKind::Conv2d;
    g.output("y", g.conv2d(g.input("x", {2, 8, 9, 9}), g.input("w", {20, 8, 3, 3}), {.pad = {1, 1, 1, 1}},
                           g.input("bias", {20})));
  }
  const std::uint64_t seed = 7;
  for (const auto& [op, g] : graphs) {
    CAPTURE(to_string(op));
    Executable want = ref.compile(g);
    cases::set_random_inputs(want, g, seed);
    want.run();
    const auto nmse = [&](bool tf32) {
      Executable got = compile_on(device, g, {.allow_tf32 = tf32, .poison_memory = true});
      cases::set_random_inputs(got, g, seed);
      got.run();
      const cases::Comparison c = cases::compare(got.output("y"), want.output("y"));
      CHECK(c.non_finite == 0);
      CHECK(c.max_abs <= cases::max_abs_tolerance(op, DType::f32, tf32) * c.want_max_abs);
      return c.nmse;
    };
    const double exact = nmse(false), tf32 = nmse(true);
    MESSAGE(to_string(op) << ": nmse " << exact << " in f32, " << tf32 << " as tf32");
    CHECK(exact <= cases::nmse_threshold(op, DType::f32));
    CHECK(tf32 <= cases::nmse_threshold(op, DType::f32, true));
    // The tf32 rounding shows: the matrix-unit path ran, not the exact one.
    CHECK(tf32 > 10 * cases::nmse_threshold(op, DType::f32));
  }
}

TEST_CASE("emulated gpu: attention wider than its kernel's tiles runs as its composition, and matches ref") {
  const auto device = open_emulated();
  for (const bool causal : {false, true}) {
    CAPTURE(causal);
    Graph g;  // head_dim 160 > attention_max_head_dim, as an imported model may have
    const Tensor q = g.input("q", {1, 2, 9, 160}), k = g.input("k", {1, 2, 11, 160}), v = g.input("v", {1, 2, 11, 160});
    std::vector<float> hidden(11, 0.0f);
    hidden[3] = -1e4f;
    const Tensor mask = g.constant("mask", {1, 1, 1, 11}, hidden);
    g.output("y", g.attention(q, k, v, {.causal = causal}, mask, "attention"));
    CHECK(contains(device->unsupported_reason(g, g.nodes().back(), {}), "head_dim"));
    const auto compiled = compile_graph(g, *device, {.poison_memory = true});
    const auto attention = [](const Node& n) { return n.op == OpKind::Attention; };
    CHECK(std::none_of(compiled->graph.nodes().begin(), compiled->graph.nodes().end(), attention));
    Executable got(std::make_unique<ExecutableImpl>(device, compiled));
    check_against(got, reference(g, 7), g, 7, OpKind::Attention);  // ref runs the attention node itself
  }
}

TEST_CASE("emulated gpu: a gather index out of range is an error of the run, naming the node and the range") {
  const auto device = open_emulated();
  for (const DType index_dtype : {DType::i64, DType::i32}) {
    CAPTURE(index_dtype);
    Graph g;
    g.output("y", g.gather(g.input("x", {5, 2}), g.input("ids", {3}, index_dtype), 0, "lookup"));
    Executable exe = compile_on(device, g);
    exe.set_input("x", std::vector<float>(10, 1.0f));
    // The first run is eager, the second captured, the later ones replayed (plan/capture.hpp): the
    // kernel's error record reaches the host on each.
    exe.set_input("ids", std::vector<float>{0, 5, 1});  // converted to the index dtype
    check_error([&] { exe.run(); }, ErrorCode::InvalidArgument, {"gather 'lookup'", "index 5", "[-5, 5)"});
    exe.set_input("ids", std::vector<float>{0, -6, 1});
    check_error([&] { exe.run(); }, ErrorCode::InvalidArgument, {"gather 'lookup'", "index -6", "[-5, 5)"});
    exe.set_input("ids", std::vector<float>{4, -5, 1});
    for (int run = 0; run < 2; ++run) {
      exe.run();
      CHECK(exe.output("y") == std::vector<float>(6, 1.0f));
    }
    exe.set_input("ids", std::vector<float>{0, 1, 7});
    check_error([&] { exe.run(); }, ErrorCode::InvalidArgument, {"gather 'lookup'", "index 7", "[-5, 5)"});
    exe.set_input("ids", std::vector<float>{4, -5, 1});
    exe.run();  // the record is cleared before each run
    CHECK(exe.output("y") == std::vector<float>(6, 1.0f));
  }
}

TEST_CASE("emulated gpu: a class label out of range is an error of the run, naming the node and the range") {
  const auto device = open_emulated();
  for (const DType label_dtype : {DType::i64, DType::i32})
    for (const bool with_loss : {true, false}) {  // the loss, first in the order, or the gradient alone
      CAPTURE(label_dtype);
      CAPTURE(with_loss);
      Graph g;
      const Tensor z = g.input("z", {3, 4}), labels = g.input("labels", {3}, label_dtype);
      if (with_loss) g.output("loss", g.softmax_cross_entropy(z, labels, "xent"));
      g.output("dz", g.softmax_cross_entropy_backward(z, labels, g.input("dy", {3}), "xent_grad"));
      // With the loss, either node may come first in the order and report.
      const std::string_view node = with_loss ? "'xent" : "softmax_cross_entropy_backward 'xent_grad'";
      Executable exe = compile_on(device, g);
      exe.set_input("z", std::vector<float>(12, 0.0f));
      exe.set_input("dy", std::vector<float>(3, 1.0f));
      const auto check_run = [&] {
        exe.run();
        if (with_loss)
          for (const float loss : exe.output("loss")) CHECK(loss == doctest::Approx(std::log(4.0)));
        CHECK(exe.output("dz") == std::vector<float>{0.25f, 0.25f, 0.25f, -0.75f, -0.75f, 0.25f, 0.25f, 0.25f,
                                                     0.25f, -0.75f, 0.25f, 0.25f});  // quarters: exact
      };
      // The first run is eager, the second captured, the later ones replayed (plan/capture.hpp): the
      // kernels' error records reach the host on each.
      exe.set_input("labels", std::vector<float>{0, 4, 1});  // converted to the label dtype
      check_error([&] { exe.run(); }, ErrorCode::InvalidArgument, {node, "label 4", "[0, 4)"});
      exe.set_input("labels", std::vector<float>{0, -1, 1});  // a negative label is an error, not class 3
      check_error([&] { exe.run(); }, ErrorCode::InvalidArgument, {node, "label -1", "[0, 4)"});
      exe.set_input("labels", std::vector<float>{3, 0, 1});
      for (int run = 0; run < 2; ++run) check_run();
      exe.set_input("labels", std::vector<float>{0, 1, 9});
      check_error([&] { exe.run(); }, ErrorCode::InvalidArgument, {node, "label 9", "[0, 4)"});
      exe.set_input("labels", std::vector<float>{3, 0, 1});
      check_run();  // the records are cleared before each run
    }
}

TEST_CASE("emulated gpu: BERT (gather on i64 ids, attention, layer norm) matches the reference") {
  const auto device = open_emulated();
  const Graph g = models::build("bert-base", {.batch = 1, .seq = 8});
  for (const Node& node : g.nodes()) CHECK_MESSAGE(device->unsupported_reason(g, node, {}).empty(), node.name);
  Executable got = compile_on(device, g);
  check_against(got, reference(g, 11), g, 11, OpKind::MatMul);
}

TEST_CASE("emulated gpu: profiled runs time every node of the compiled graph") {
  const auto device = open_emulated();
  Graph g;
  const Tensor x = g.input("x", {2, 3, 8, 8});
  const Tensor w = g.constant("w", {4, 3, 3, 3}, cases::random_values(4 * 27, 1));
  g.output("y", g.softmax(g.flatten(g.relu(g.conv2d(x, w, {.pad = {1, 1, 1, 1}}))), 1));
  Executable exe = compile_on(device, g, {.profile = true});
  cases::set_random_inputs(exe, g, 3);
  for (int i = 0; i < 3; ++i) exe.run();
  const auto timings = exe.node_timings();
  CHECK(timings.size() == 3);  // the relu rides in the conv's epilogue
  for (const NodeTiming& t : timings) CHECK(t.seconds >= 0.0);
}

TEST_CASE("emulated gpu: every run is timed by events on its stream, eager, captured and replayed") {
  const auto device = open_emulated();
  Graph g;
  const Tensor x = g.input("x", {2, 3, 8, 8});
  const Tensor w = g.constant("w", {4, 3, 3, 3}, cases::random_values(4 * 27, 1));
  g.output("y", g.softmax(g.flatten(g.conv2d(x, w, {.pad = {1, 1, 1, 1}})), 1));
  Executable exe = compile_on(device, g);
  cases::set_random_inputs(exe, g, 3);
  check_run_times(exe, RunClock::Device);
}

TEST_CASE("emulated gpu: output_ready reports each output once, after the run, eager, captured and replayed") {
  const auto device = open_emulated();
  Graph g;
  const Tensor x = g.input("x", {4, 6});
  const Tensor a = g.relu(x);
  g.output("b", g.sigmoid(g.add(a, a)));
  g.output("a", a);
  g.output("x", x);
  Executable exe = compile_on(device, g);
  for (int run = 0; run < 3; ++run) {  // the capture policy's eager run, capture and replay
    cases::set_random_inputs(exe, g, 5 + static_cast<std::uint64_t>(run));
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::byte>, std::less<>> seen;
    exe.run({.output_ready = [&](std::string_view name, std::span<const std::byte> bytes) {
      order.emplace_back(name);
      seen[std::string(name)].assign(bytes.begin(), bytes.end());
    }});
    CHECK(order == std::vector<std::string>{"a", "b", "x"});  // execution order; x, which no node makes, last
    for (const auto& [name, bytes] : seen) CHECK(bytes == exe.output_bytes(name));
  }
}

TEST_CASE("emulated gpu: the FMA probe's threads compute what it counts, at a positive rate") {
  const double gflops = open_emulated()->measure_fma_gflops();  // throws where a thread's chains sum wrong
  CHECK(std::isfinite(gflops));
  CHECK(gflops > 0.0);
}

TEST_CASE("emulated gpu: the copy probe times the runtime's device-to-device copy at a positive rate") {
  const double gbs = open_emulated()->measure_copy_gbs();
  CHECK(std::isfinite(gbs));
  CHECK(gbs > 0.0);
}

TEST_CASE("emulated gpu: out of memory says how much was asked and how much is free") {
  const auto device = open_emulated();
  check_error([&] { device->allocate(std::size_t{3} << 30); }, ErrorCode::OutOfMemory,
              {"gpu-emulated:0", std::to_string(std::size_t{3} << 30), "free"});
}

TEST_CASE("emulated gpu: the vendor provider is unsupported, with a reason") {
  const auto device = open_emulated();
  Graph g;
  g.output("y", g.relu(g.input("x", {3})));
  CHECK_FALSE(device->unsupported_reason(g, g.nodes()[0], {.impl = Impl::Vendor}).empty());
}

}  // namespace porta::test
