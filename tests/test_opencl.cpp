// The OpenCL backend beyond the differential harness: device discovery and selection, error
// paths, profiling, and the on-disk program cache. Compiled only when the backend is built; on a
// machine without an OpenCL device every case skips (test_util.hpp, skip_test), and so does the run.
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

#include <random>

#include "backends/opencl/backend.hpp"
#include "backends/opencl/program_cache.hpp"
#include "core/compile/compile.hpp"
#include "core/runtime/executable_impl.hpp"
#include "op_cases/verify.hpp"
#include "test_util.hpp"

namespace porta::test {
namespace {

std::optional<DeviceInfo> first_opencl_device() {
  for (const BackendStatus& b : backends())
    if (b.name == "opencl") {
      if (!b.devices.empty()) return b.devices.front();
      skip_test("no OpenCL device: " + b.reason);
      return std::nullopt;
    }
  FAIL_CHECK("the opencl backend is built but not in backends()");
  return std::nullopt;
}

// The same device as the backend's discovery describes it, for the tests that reach below Device.
std::optional<detail::ClDeviceDescription> first_discovered_device() {
  detail::ClDiscovery found = detail::discover_opencl_devices();
  if (!found.devices.empty()) return std::move(found.devices.front());
  skip_test("no OpenCL device: " + found.reason);
  return std::nullopt;
}

// A directory of its own, removed at the end, so cache tests see only their own files.
struct TempDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("porta-opencl-test-" + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A program of its own, so no other test's cache entry can answer for it.
constexpr std::string_view source = "__kernel void twice(__global float* x) { x[get_global_id(0)] *= 2.0f; }\n";
constexpr std::string_view options = "-DPORTA_CACHE_TEST";

}  // namespace

TEST_SUITE("opencl") {
  TEST_CASE("opencl devices are described and open by index or by name") {
    const auto info = first_opencl_device();
    if (!info) return;
    CHECK(info->spec == "opencl:0");
    CHECK(!info->name.empty());
    CHECK(!info->vendor.empty());
    CHECK(contains(info->arch, "OpenCL C"));
    CHECK(info->compute_units > 0);
    CHECK(info->subgroup_size >= 1);
    CHECK(info->memory_total > 0);

    CHECK(Device::open("opencl:0").info().name == info->name);
    const std::string part = info->name.substr(0, std::min<std::size_t>(info->name.size(), 5));
    std::string upper = part;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    CHECK(Device::open("opencl:name=" + upper).info().name == info->name);  // case-insensitive

    check_error([] { Device::open("opencl:99"); }, ErrorCode::NotFound, {"opencl:99", "opencl:0"});
    check_error([] { Device::open("opencl:name=no-such-device"); }, ErrorCode::NotFound, {"no-such-device", "opencl:0"});
    check_error([] { Device::open("opencl:color=red"); }, ErrorCode::InvalidArgument, {"color"});
    check_error([] { Device::open("opencl:1:name=x"); }, ErrorCode::InvalidArgument, {"not both"});
  }

  TEST_CASE("opencl: vendor provider, out of memory and profiling") {
    if (!first_opencl_device()) return;
    const Device device = Device::open("opencl:0");
    Graph g;
    g.output("y", g.relu(g.add(g.input("a", {3, 5}), g.input("b", {5}))));
    // CLBlast, where built, runs f32 GEMM and conv only; without it, nothing runs as impl=vendor.
    Graph half;
    half.output("y", half.matmul(half.input("a", {3, 5}, DType::bf16), half.input("b", {5, 2}, DType::bf16)));
    check_error([&] { device.compile(half, {.impl = Impl::Vendor}); }, ErrorCode::Unsupported, {"CLBlast"});
#ifdef PORTA_HAVE_CLBLAST
    Graph grouped;
    grouped.output("y", grouped.conv2d(grouped.input("x", {1, 4, 5, 5}), grouped.input("w", {4, 2, 3, 3}), {.groups = 2}));
    check_error([&] { device.compile(grouped, {.impl = Impl::Vendor}); }, ErrorCode::Unsupported, {"groups=2"});
    CHECK_NOTHROW(device.compile(g, {.impl = Impl::Vendor}));  // porta's kernels run add and relu
#endif

    Executable exe = device.compile(g, {.profile = true});
    exe.set_input("a", std::vector<float>(15, -1.0f));
    exe.set_input("b", std::vector<float>{1, 2, 3, 4, 5});
    exe.run();
    CHECK(exe.output("y") == std::vector<float>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4});
    const auto timings = exe.node_timings();
    REQUIRE(timings.size() == 2);
    for (const NodeTiming& t : timings) CHECK(t.seconds > 0.0);

    Graph huge;
    huge.output("y", huge.relu(huge.input("x", {std::int64_t{1} << 40})));
    check_error([&] { device.compile(huge); }, ErrorCode::OutOfMemory, {"bytes", device.info().name});
  }

  TEST_CASE("opencl: every run is timed by profiling events, inside the host's wall time") {
    if (!first_opencl_device()) return;
    const Device device = Device::open("opencl:0");
    Graph g;  // several kernels, so the time spans the first one's start to the last one's end
    const Tensor x = g.input("x", {64, 96});
    g.output("y", g.relu(g.matmul(g.add(x, x), g.input("w", {96, 80}))));
    for (const bool profile : {false, true}) {
      CAPTURE(profile);
      Executable exe = device.compile(g, {.profile = profile});
      cases::set_random_inputs(exe, g, 1);
      check_run_times(exe, RunClock::Device);
      if (!profile) continue;
      double nodes = 0.0;
      for (const NodeTiming& t : exe.node_timings()) nodes += t.seconds;
      CHECK(nodes <= exe.last_run_time().seconds * 1.0001);  // the span holds every node and the gaps
    }
  }

  TEST_CASE("opencl: node_plans name the GEMM kernel and its tiles, chosen at prepare") {
    if (!first_opencl_device()) return;
    Graph g;
    const Tensor x = g.input("x", {1, 16, 12, 12});
    const Tensor w = g.constant("w", {24, 16, 3, 3}, cases::random_values(24 * 16 * 9, 1), DType::f32);
    const Tensor y = g.conv2d(x, w, {.pad = {1, 1, 1, 1}});
    g.output("y", g.relu(g.matmul(g.reshape(y, {24, 144}), g.input("v", {144, 8}))));
    Executable exe = Device::open("opencl:0").compile(g);
    cases::set_random_inputs(exe, g, 1);
    exe.run();
    std::string conv, gemm;
    for (const NodePlan& p : exe.node_plans()) {
      if (p.op == OpKind::Conv2d) conv = p.plan;
      if (p.op == OpKind::MatMul) gemm = p.plan;
      if (p.op == OpKind::Relu) CHECK(p.plan.empty());
    }
    CHECK((conv == "conv direct" || conv.starts_with("conv implicit_gemm ")));
    CHECK((gemm.starts_with("gemm vector ") || gemm.starts_with("gemm tiled ")));
  }

  TEST_CASE("opencl FMA probe: a positive rate, from chains that computed what it counts") {
    if (!first_opencl_device()) return;
    const double gflops = Device::open("opencl:0").measure_fma_gflops();  // throws where the chains' sum is wrong
    CHECK(std::isfinite(gflops));
    CHECK(gflops > 0.0);
  }

  TEST_CASE("opencl program cache: cold build, warm load, and bad files rebuilt") {
    namespace fs = std::filesystem;
    using detail::ProgramCache;
    const auto found = first_discovered_device();
    if (!found) return;
    const detail::ClDevice device(*found);
    const TempDir dir;

    auto start = std::chrono::steady_clock::now();
    ProgramCache cold(device, dir.path);
    CHECK(cold.get(source, options));
    const double cold_seconds = seconds_since(start);
    CHECK(cold.stats().source_builds == 1);
    CHECK(cold.get(source, options));
    CHECK(cold.stats().memory_hits == 1);
    const fs::path file = cold.file_for(source, options);
    REQUIRE(fs::exists(file));
    CHECK(file.parent_path() == dir.path);

    start = std::chrono::steady_clock::now();
    ProgramCache warm(device, dir.path);
    CHECK(warm.get(source, options));
    const double warm_seconds = seconds_since(start);
    CHECK(warm.stats().disk_loads == 1);
    CHECK(warm.stats().source_builds == 0);
    MESSAGE("program build: cold " << cold_seconds << " s, warm " << warm_seconds << " s");
    CHECK(warm_seconds < cold_seconds);

    const auto size = fs::file_size(file);
    const auto rebuilt_after = [&](const std::string& what, auto&& damage) {
      CAPTURE(what);
      damage();
      ProgramCache again(device, dir.path);
      CHECK(again.get(source, options));
      CHECK(again.stats().rejected_files == 1);
      CHECK(again.stats().source_builds == 1);
      CHECK(fs::file_size(file) == size);  // rewritten whole
      ProgramCache after(device, dir.path);
      CHECK(after.get(source, options));
      CHECK(after.stats().disk_loads == 1);
    };
    rebuilt_after("garbage", [&] { std::ofstream(file, std::ios::binary | std::ios::trunc) << "not a program binary"; });
    rebuilt_after("truncated", [&] { fs::resize_file(file, size / 2); });
    rebuilt_after("flipped byte", [&] {
      std::fstream f(file, std::ios::binary | std::ios::in | std::ios::out);
      f.seekp(static_cast<std::streamoff>(size - 1));
      f.put('\x5a' ^ static_cast<char>(size));
    });
    rebuilt_after("stale (another program's file)", [&] {
      ProgramCache other(device, dir.path);
      other.get(source, "-DPORTA_OTHER_PROGRAM");
      fs::copy_file(other.file_for(source, "-DPORTA_OTHER_PROGRAM"), file, fs::copy_options::overwrite_existing);
    });
    for (const auto& entry : fs::directory_iterator(dir.path)) CHECK(entry.path().extension() == ".clbin");  // no temp left
  }

  TEST_CASE("opencl GEMM tiles: candidates fit and compute right; tuned tiles are stored, reloaded and checked") {
    using detail::GemmTiles;
    const auto found = first_discovered_device();
    if (!found) return;
    const detail::ClDeviceDescription& d = *found;
    const GemmTiles defaults = detail::default_gemm_tiles(d);
    CHECK(defaults.fits(d));
    const std::vector<GemmTiles> shapes = detail::gemm_shape_candidates(d);
    REQUIRE(shapes.size() >= 2);
    for (const GemmTiles& shape : shapes) {
      CHECK(shape.fits(d));
      CHECK(GemmTiles::parse(shape.to_string())->to_string() == shape.to_string());
      for (const GemmTiles& block : detail::gemm_block_candidates(d, shape)) CHECK(block.fits(d));
    }
    CHECK(!GemmTiles::parse("vector vw=16 nv=2"));
    CHECK(!GemmTiles::parse("vector vw=16 nv=2 mr=12 bm=96 bn=128 kc=x"));
    CHECK(!GemmTiles::parse("simd vw=16"));

    // Another shape, with KC small enough that k takes three slices, on sizes that fit no block.
    GemmTiles other = shapes.back();
    other.kc = 128;
    const std::int64_t m = 37, n = 70, k = 300;
    std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(n * k));
    std::mt19937 random(5);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (float& v : a) v = value(random);
    for (float& v : b) v = value(random);
    Graph g;
    g.output("y", g.matmul(g.input("a", {m, k}), g.input("b", {n, k}), {.trans_b = true}));
    const auto device = detail::make_opencl_device(d, other);
    detail::ExecutableImpl exe(device, detail::compile_graph(g, *device, {.poison_memory = true}));
    exe.set_input("a", std::as_bytes(std::span(a)), true);
    exe.set_input("b", std::as_bytes(std::span(b)), true);
    exe.run();
    const std::vector<std::byte> out = exe.output_bytes("y");
    const auto* y = reinterpret_cast<const float*>(out.data());
    double worst = 0.0;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double want = 0.0;
        for (std::int64_t l = 0; l < k; ++l) want += double(a[static_cast<std::size_t>(i * k + l)]) * b[static_cast<std::size_t>(j * k + l)];
        worst = std::max(worst, std::abs(y[i * n + j] - want));
      }
    CAPTURE(other.to_string());
    CHECK(worst < 1e-4);

    const TempDir dir;
    CHECK(detail::choose_gemm_tiles(d, dir.path).to_string() == defaults.to_string());
    const std::filesystem::path file = detail::tuned_tiles_file(dir.path, d);
    detail::store_tuned_tiles(file, d, other);
    CHECK(detail::choose_gemm_tiles(d, dir.path).to_string() == other.to_string());
    detail::ClDeviceDescription elsewhere = d;
    elsewhere.identity += " (another driver)";
    std::filesystem::copy_file(file, detail::tuned_tiles_file(dir.path, elsewhere));
    CHECK(detail::choose_gemm_tiles(elsewhere, dir.path).to_string() == detail::default_gemm_tiles(elsewhere).to_string());
    GemmTiles too_big = other;
    too_big.block_m = other.micro_m * 200;  // far more local memory than any device has
    detail::store_tuned_tiles(file, d, too_big);
    CHECK(detail::choose_gemm_tiles(d, dir.path).to_string() == defaults.to_string());
    std::ofstream(file, std::ios::trunc) << "not a tuning file";
    CHECK(detail::choose_gemm_tiles(d, dir.path).to_string() == defaults.to_string());
  }

  TEST_CASE("opencl: a program that does not build raises BuildFailed with the build log") {
    const auto found = first_discovered_device();
    if (!found) return;
    const detail::ClDevice device(*found);
    detail::ProgramCache cache(device, std::nullopt);
    check_error([&] { cache.get("__kernel void broken(__global float* x) { x[0] = undeclared_name; }", ""); },
                ErrorCode::BuildFailed, {"clBuildProgram", "build log", "undeclared_name"});
  }
}

}  // namespace porta::test
