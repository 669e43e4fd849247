// porta-bench's own logic: workload files, the command line's checks, timing statistics, the roofline and the
// report's metrics.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/core.h>

#include "backward.hpp"
#include "cli.hpp"
#include "cluster.hpp"
#include "comm.hpp"
#include "compare.hpp"
#include "job.hpp"
#include "models.hpp"
#include "openblas.hpp"
#include "peak.hpp"
#include "problems.hpp"
#include "report.hpp"
#include "results_file.hpp"
#include "scaling_model.hpp"
#include "standings.hpp"
#include "suites.hpp"
#include "timing.hpp"
#include "train.hpp"
#include "workload_csv.hpp"

using namespace porta;
using namespace porta::bench;

namespace {

std::string error_of(std::string_view text) {
  try {
    parse_workload_csv(text, "w.csv");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::InvalidArgument);
    return e.what();
  }
  return "no error";
}

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// The first line where `actual` differs from `expected`, or empty where they are the same.
std::string first_difference(const std::string& actual, const std::string& expected) {
  std::istringstream a(actual), e(expected);
  std::string line_a, line_e;
  for (int n = 1;; ++n) {
    const bool more_a = static_cast<bool>(std::getline(a, line_a)), more_e = static_cast<bool>(std::getline(e, line_e));
    if (!more_a && !more_e) return actual == expected ? "" : "the same lines, different line ends";
    if (more_a != more_e || line_a != line_e)
      return fmt::format("line {}: made '{}', expected '{}'", n, more_a ? line_a : "(end)", more_e ? line_e : "(end)");
  }
}

}  // namespace

TEST_SUITE("workload_csv") {
  TEST_CASE("GEMM lists: labels, transposes, dtype, comments and CRLF") {
    const auto entries = parse_workload_csv(
        "set,m,n,k,trans_a,trans_b,dtype\r\n# a comment\r\n\r\ntrain,1760,16,1760,0,1,f32\r\ninfer, 35,8457,2560,1,0,bf16\r\n");
    REQUIRE(entries.size() == 2);
    const auto& a = std::get<cases::GemmProblem>(entries[0].problem);
    CHECK(entries[0].line == 4);
    CHECK(entries[0].label == "train");
    CHECK((a.m == 1760 && a.n == 16 && a.k == 1760 && !a.trans_a && a.trans_b && a.dtype == DType::f32));
    const auto& b = std::get<cases::GemmProblem>(entries[1].problem);
    CHECK((b.m == 35 && b.trans_a && b.dtype == DType::bf16));
  }

  TEST_CASE("conv lists: either stride/pad or their h/w forms, n optional") {
    const auto resnet = parse_workload_csv("layer,c,h,w,k,r,s,stride,pad,count\nconv1,3,224,224,64,7,7,2,3,1\n");
    const auto& r = std::get<cases::ConvProblem>(resnet.at(0).problem);
    CHECK((r.n == 1 && !resnet[0].n && r.params.stride[1] == 2 && r.params.pad[3] == 3 && r.params.groups == 1));
    const auto db = parse_workload_csv("set,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,groups\nt,4,1,161,700,32,5,20,1,2,2,3,1\n");
    const auto& d = std::get<cases::ConvProblem>(db.at(0).problem);
    CHECK((d.n == 4 && db[0].n == 4 && d.params.pad[0] == 1 && d.params.pad[1] == 2 && d.params.pad[2] == 1 &&
           d.params.stride[0] == 2 && d.params.stride[1] == 3));
  }

  TEST_CASE("the built-in lists parse whole") {
    CHECK(builtin_workload("deepbench_gemm").size() == 248);
    CHECK(builtin_workload("deepbench_conv").size() == 218);
    CHECK(builtin_workload("resnet50_conv").size() == 20);
    CHECK(builtin_workload("bert_gemm").size() == 20);
    const auto depthwise = builtin_workload("efficientnet_b0_depthwise");
    CHECK(depthwise.size() == 12);
    for (const auto& row : depthwise) {
      const auto& d = std::get<cases::ConvProblem>(row.problem);
      CHECK((d.params.groups == d.c && d.k == d.c));
    }
    CHECK_THROWS_AS(builtin_workload("nope"), Error);
  }

  TEST_CASE("malformed files name the line and the value") {
    CHECK(has(error_of("m,n,k\n1,2,x\n"), "w.csv:2: k = 'x' is not an integer"));
    CHECK(has(error_of("m,n,k\n1,2,3\n4,5\n"), "w.csv:3: 2 fields, the header has 3"));
    CHECK(has(error_of("m,n,k,colour\n"), "w.csv:1: unknown column 'colour'"));
    CHECK(has(error_of("m,n\n"), "no 'k' column"));
    CHECK(has(error_of("a,b\n"), "needs an 'm' column"));
    CHECK(has(error_of("m,n,k\n0,1,1\n"), "m = 0 must be >= 1"));
    CHECK(has(error_of("m,n,k\n1,99999999999999999999,1\n"), "is out of range"));
    CHECK(has(error_of("m,n,k,trans_a\n1,1,1,2\n"), "trans_a = '2' is not 0 or 1"));
    CHECK(has(error_of("c,h,w,k,r,s,stride,stride_h\n1,1,1,1,1,1,1,1\n"), "either stride or stride_h/stride_w"));
    CHECK(has(error_of("m,n,k,dtype\n1,1,1,f64\n"), "dtype = 'f64'"));
    CHECK(has(error_of("m,m,k\n"), "column 'm' appears twice"));
    CHECK(has(error_of("m,n,k\n\"1\",1,1\n"), "quoted fields"));
    CHECK(has(error_of(""), "no header line"));
    CHECK(has(error_of("m,n,k\n1,,1\n"), "column n is empty"));
  }

  TEST_CASE("arbitrary bytes give a clear error or entries, never a crash") {
    std::mt19937 rng(7);
    const std::string alphabet = "mnkcshwr_,0123456789-\n\r #\"xa";
    for (int i = 0; i < 2000; ++i) {
      std::string text = i % 2 ? "m,n,k\n" : "c,h,w,k,r,s,n\n";
      const int length = static_cast<int>(rng() % 60);
      for (int j = 0; j < length; ++j) text += alphabet[rng() % alphabet.size()];
      try {
        parse_workload_csv(text);
      } catch (const Error& e) {
        CHECK(std::string(e.what()).rfind("workload:", 0) == 0);
      }
    }
  }

  TEST_CASE("problems from entries carry the file's line when porta rejects the shape") {
    const auto entries = parse_workload_csv("c,h,w,k,r,s\n3,4,4,8,3,3\n3,2,2,8,3,3\n", "x.csv");
    CHECK_THROWS_WITH_AS(workload_problems(entries, 1, "x.csv"), doctest::Contains("x.csv:3:"), Error);
    const auto ok = workload_problems({entries[0]}, 1, "x.csv", 5, "pre/");
    CHECK(ok.at(0).workload == "pre/5x3x4x4 k8 3x3");
  }

  TEST_CASE("a conv whose weights overflow 64 bits is refused before they are counted or made") {
    const auto entries = parse_workload_csv("c,h,w,k,r,s\n1048576,1,1,4294967296,1048576,1048576\n", "x.csv");
    CHECK_THROWS_WITH_AS(workload_problems(entries, 1, "x.csv"), doctest::Contains("x.csv:2:"), Error);
  }
}

TEST_CASE("timing statistics") {
  const Timing t = summarize({5, 1, 4, 2, 3, 10, 6, 7, 8, 9});
  CHECK(t.median_s == doctest::Approx(5.5));
  CHECK(t.min_s == 1);
  CHECK(t.max_s == 10);
  CHECK(t.p90_s == 9);
  CHECK(t.mean_s == doctest::Approx(5.5));
  const TimingPolicy seven{.warmup_s = 0.0, .min_samples = 7, .min_time_s = 0.0, .max_time_s = 1.0};
  int runs = 0;
  const Timing m = measure(
      [&] {
        ++runs;
        return std::optional<double>();
      },
      seven);
  CHECK(m.samples.size() == 7);
  CHECK(runs == 7);
  CHECK(m.timer == "host");
  CHECK(m.samples == m.host_samples);
  CHECK(m.median_s == m.host_median_s);
  CHECK(m.overhead >= 0.0);
}

TEST_CASE("timing: runs sampled together take turns, each opening with settle_s of untimed runs") {
  const TimingPolicy policy{.warmup_s = 0.0, .min_samples = 3, .min_time_s = 4 * round_s, .max_time_s = 2.0};
  std::string order;
  const auto sleeper = [&](char name, double seconds) {
    return [&order, name, seconds] {
      order += name;
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
      return std::optional<double>();
    };
  };
  const std::vector<Timing> t = measure_rounds({sleeper('a', 0.002), sleeper('b', 0.002)}, policy);
  REQUIRE(t.size() == 2);
  CAPTURE(order);
  for (const Timing& one : t) {
    CHECK(one.samples.size() >= 3);
    CHECK(one.median_s >= 0.002);
  }
  // Several turns each, alternating, every one opening with untimed runs for settle_s: of 2 ms
  // runs, at least one and at most settle_s / 2 ms.
  CHECK(order.front() == 'a');
  const auto runs_of = [&](char name) { return static_cast<std::size_t>(std::count(order.begin(), order.end(), name)); };
  std::size_t turns_of_a = 1;
  for (std::size_t i = 1; i < order.size(); ++i) turns_of_a += order[i - 1] == 'b' && order[i] == 'a';
  CHECK(turns_of_a >= 2);
  const std::size_t untimed_a = runs_of('a') - t[0].samples.size();
  CHECK(untimed_a >= turns_of_a);
  CHECK(untimed_a <= turns_of_a * static_cast<std::size_t>(std::ceil(settle_s / 0.002)));
  // A run longer than settle_s opens its turn with one untimed run; one alone takes no turns.
  order.clear();
  const std::vector<Timing> long_runs = measure_rounds({sleeper('a', 1.2 * settle_s), sleeper('b', 0.001)},
                                                       {.warmup_s = 1e-6, .min_samples = 2, .min_time_s = 0.0, .max_time_s = 2.0});
  CHECK(long_runs[0].samples.size() == 2);
  CHECK(runs_of('a') == 2 + long_runs[0].samples.size());  // its warm-up, the untimed run, 2 samples
  order.clear();
  const Timing alone = measure(sleeper('a', 0.002), policy);
  CHECK(runs_of('a') == alone.samples.size());
  CHECK_FALSE(alone.error);
  // A run that throws stops its own sampling, not the others'.
  int calls = 0;
  const std::vector<Timing> one_fails = measure_rounds(
      {[&] {
         if (++calls == 3) throw std::runtime_error("device lost");
         std::this_thread::sleep_for(std::chrono::duration<double>(settle_s));
         return std::optional<double>();
       },
       sleeper('b', 0.001)},
      {.warmup_s = 0.0, .min_samples = 5, .min_time_s = 0.0, .max_time_s = 1.0});
  REQUIRE(one_fails[0].error);
  CHECK_THROWS_WITH_AS(std::rethrow_exception(one_fails[0].error), "device lost", std::runtime_error);
  CHECK(one_fails[0].samples.size() == 1);  // its third call: the untimed one opening its turn, a sample, then this
  CHECK_FALSE(one_fails[1].error);
  CHECK(one_fails[1].samples.size() >= 5);
}

TEST_CASE("timing: device-event samples are the statistics when every run has one; host wall kept") {
  const TimingPolicy seven{.warmup_s = 0.0, .min_samples = 7, .min_time_s = 0.0, .max_time_s = 1.0};
  int runs = 0;
  const Timing d = measure([&] { return std::optional<double>(1e-3 * ++runs); }, seven);
  CHECK(d.timer == "device-event");
  CHECK(d.samples == std::vector<double>{1e-3, 2e-3, 3e-3, 4e-3, 5e-3, 6e-3, 7e-3});
  CHECK(d.median_s == doctest::Approx(4e-3));
  CHECK(d.min_s == doctest::Approx(1e-3));
  CHECK(d.host_samples.size() == 7);
  CHECK(d.host_median_s > 0.0);
  CHECK(d.host_median_s < 1e-3);  // the made-up device times dwarf these empty runs...
  CHECK(d.overhead == 0.0);       // ... so the wall time is all inside them
  runs = 0;
  const Timing mixed = measure([&] { return ++runs == 3 ? std::nullopt : std::optional<double>(1.0); }, seven);
  CHECK(mixed.timer == "host");  // one run without a device time: the host clock for all
  CHECK(mixed.samples == mixed.host_samples);
}

TEST_CASE("providers in turns: a row each, in the order asked for, each verified") {
  RunSettings settings{.timing = {.warmup_s = 0.0, .min_samples = 3, .min_time_s = 0.0, .max_time_s = 1.0},
                       .providers = {Provider::OpenBlas, Provider::Native, Provider::Vendor},
                       .verify = true};
  const Problem p = gemm_problem({.m = 33, .n = 17, .k = 9});
  // On 2 threads OpenBLAS runs on its own, after the others; its row keeps its place.
  for (const Target& target : open_targets({"cpu:threads=1", "cpu:threads=2"})) {
    const std::vector<Row> rows = run_providers(p, target, settings);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].impl == "openblas");
    CHECK(rows[1].impl == "native");
    CHECK(rows[2].impl == "vendor");
    for (const Row& row : rows) {
      CAPTURE(row.device);
      CAPTURE(row.impl);
      CAPTURE(row.reason);
      if (row.status == "unsupported") continue;  // a build without oneDNN or OpenBLAS says so
      CHECK(row.status == "ok");
      CHECK(row.verified == true);
      CHECK(row.samples >= 3);
    }
  }
  // A device that could not be opened fails every provider's row, and nothing else.
  const std::vector<Row> failed = run_providers(p, Target{.spec = "cpu:x", .backend = "cpu", .error = "no such device"},
                                                settings);
  REQUIRE(failed.size() == 3);
  for (const Row& row : failed) CHECK((row.status == "failed" && row.reason == "no such device"));
}

TEST_CASE("rows: timer and host wall times in JSON and CSV; run_problem fills them per backend") {
  const Json columns = to_json(Row{});
  for (const char* key : {"timer", "host_median_s", "host_min_s", "median_s", "overhead_pct"}) CHECK(columns.contains(key));
  CHECK(columns["timer"].is_null());  // nothing timed

  const Problem p = gemm_problem({.m = 48, .n = 40, .k = 56});
  const RunSettings settings{.timing = {.warmup_s = 0.0, .min_samples = 3, .min_time_s = 0.0, .max_time_s = 1.0}};
  std::vector<Row> rows;
  for (const Target& target : open_targets({"cpu"})) rows.push_back(run_problem(p, target, settings));
  for (const DeviceInfo& info : devices())
    if (info.spec == "opencl:0")
      for (const Target& target : open_targets({"opencl:0"})) rows.push_back(run_problem(p, target, settings));
  for (const Row& row : rows) {
    CAPTURE(row.device);
    REQUIRE(row.status == "ok");
    REQUIRE(row.median_s);
    REQUIRE(row.host_median_s);
    CHECK(*row.median_s > 0.0);
    if (row.backend == "cpu") {
      CHECK(row.timer == "host");
      CHECK(*row.median_s == *row.host_median_s);
    } else {
      CHECK(row.timer == "device-event");
      CHECK(*row.median_s <= *row.host_median_s * 1.02 + 10e-6);
    }
  }
  MESSAGE(rows.size() << " devices");

  const auto path = std::filesystem::temp_directory_path() / "porta-bench-test-rows.csv";
  write_csv(path, rows);
  std::ifstream file(path);
  std::string header, first;
  std::getline(file, header);
  std::getline(file, first);
  CHECK(has(header, ",timer,median_s,"));
  CHECK(has(header, ",host_median_s,host_min_s,"));
  CHECK(has(first, ",host,"));
  std::filesystem::remove(path);
}

TEST_CASE("openblas rows: verified against ref on cpu, with porta's inputs; unsupported elsewhere") {
  const RunSettings settings = with_provider(
      {.timing = {.warmup_s = 0.0, .min_samples = 2, .min_time_s = 0.0, .max_time_s = 1.0}, .verify = true},
      Provider::OpenBlas);
  const Target cpu = open_targets({"cpu:threads=1"}).front();
  // Odd sizes, both transposes, a batch: a mismatch in any of them fails verification.
  for (const cases::GemmProblem& g : {cases::GemmProblem{.m = 37, .n = 29, .k = 41},
                                      cases::GemmProblem{.m = 16, .n = 33, .k = 7, .batch = 3, .trans_a = true, .trans_b = true}}) {
    const Row row = run_problem(gemm_problem(g), cpu, settings);
    CAPTURE(row.workload);
    CAPTURE(row.reason);
    CHECK(row.impl == "openblas");
    if (row.status == "unsupported") {  // a build without OpenBLAS says so
      CHECK(has(row.reason, "without OpenBLAS"));
      continue;
    }
    CHECK(row.status == "ok");
    CHECK(row.verified == true);
    CHECK(row.gflops > 0.0);
  }
  const Row bf16 = run_problem(gemm_problem({.m = 8, .n = 8, .k = 8, .dtype = DType::bf16}), cpu, settings);
  CHECK(bf16.status == "unsupported");
  const Row conv = run_problem(conv_problem({.n = 1, .c = 2, .h = 5, .w = 5, .k = 3, .r = 3, .s = 3}, 1), cpu, settings);
  CHECK(conv.status == "unsupported");
  CHECK(has(conv.reason, "not a GEMM"));
}

TEST_CASE("compare: one clock per row; host wall times where the files' timers differ") {
  const Json device_row{{"timer", "device-event"}, {"median_s", 1.0}, {"host_median_s", 1.5}};
  const Json host_row{{"timer", "host"}, {"median_s", 2.0}, {"host_median_s", 2.0}};
  const Json old_row{{"median_s", 3.0}};  // written before rows had a timer: host-timed
  ComparedTimes t = compared_times(device_row, device_row);
  CHECK(t.clock == "device-event");
  CHECK(*t.a == 1.0);
  t = compared_times(device_row, host_row);
  CHECK(t.clock == "host");
  CHECK(*t.a == 1.5);
  CHECK(*t.b == 2.0);
  t = compared_times(old_row, device_row);
  CHECK(t.clock == "host");
  CHECK(*t.a == 3.0);
  CHECK(*t.b == 1.5);
  t = compared_times(old_row, host_row);
  CHECK(t.clock == "host");
  CHECK(*t.a == 3.0);
  CHECK(!compared_times(Json{{"timer", "device-event"}, {"median_s", 1.0}}, host_row).a);  // no host time: no ratio
}

TEST_CASE("backward rows: porta's gradient graphs and oneDNN's backward primitives, each verified against ref") {
  const RunSettings settings{.timing = {.warmup_s = 0.0, .min_samples = 2, .min_time_s = 0.0, .max_time_s = 1.0},
                             .providers = {Provider::Native, Provider::Vendor},
                             .verify = true};
  // Odd sizes; a stride, asymmetric padding, a dilation, a group count (depthwise), both layouts, a batch of 1;
  // a linear layer with its weights transposed and not.
  std::vector<cases::ConvProblem> convs;
  cases::ConvProblem strided{.n = 2, .c = 5, .h = 9, .w = 7, .k = 6, .r = 3, .s = 3};
  strided.params.stride = {2, 2};
  strided.params.pad = {1, 0, 1, 2};
  strided.params.layout = Layout::NHWC;
  convs.push_back(strided);
  cases::ConvProblem dilated{.n = 1, .c = 3, .h = 8, .w = 10, .k = 4, .r = 3, .s = 2};
  dilated.params.dilation = {2, 1};
  dilated.params.pad = {2, 1, 2, 1};
  convs.push_back(dilated);  // NCHW
  cases::ConvProblem depthwise{.n = 3, .c = 8, .h = 11, .w = 11, .k = 8, .r = 5, .s = 5};
  depthwise.params.stride = {2, 2};
  depthwise.params.pad = {2, 2, 2, 2};
  depthwise.params.groups = 8;
  depthwise.params.layout = Layout::NHWC;
  convs.push_back(depthwise);
  cases::ConvProblem pointwise{.n = 2, .c = 17, .h = 5, .w = 5, .k = 9};
  pointwise.params.layout = Layout::NHWC;
  convs.push_back(pointwise);
  pointwise.params.stride = {2, 3};  // the 1x1 data gradient spread by the stride
  pointwise.params.pad = {0, 1, 1, 0};
  convs.push_back(pointwise);
  cases::ConvProblem grouped{.n = 2, .c = 6, .h = 7, .w = 6, .k = 4, .r = 3, .s = 3};
  grouped.params.groups = 2;
  grouped.params.stride = {2, 1};
  grouped.params.layout = Layout::NHWC;
  convs.push_back(grouped);
  std::vector<Problem> problems;
  for (const Gradient g : {Gradient::Data, Gradient::Filter}) {
    for (const cases::ConvProblem& c : convs) problems.push_back(conv_backward_problem(c, g));
    for (const bool trans_b : {true, false})
      problems.push_back(gemm_backward_problem({.m = 13, .n = 21, .k = 9, .trans_b = trans_b}, g));
  }
  for (const Target& target : open_targets({"cpu:threads=1", "cpu:threads=2"}))
    for (const Problem& problem : problems) {
      CAPTURE(target.spec);
      CAPTURE(problem.op);
      CAPTURE(problem.workload);
      CHECK(problem.flops > 0.0);
      const std::vector<Row> rows = run_providers(problem, target, settings);
      REQUIRE(rows.size() == 2);
      for (const Row& row : rows) {
        CAPTURE(row.impl);
        CAPTURE(row.reason);
        CHECK(row.op == problem.op);
        if (row.impl == "vendor" && !PORTA_BENCH_ONEDNN) {
          CHECK(row.status == "unsupported");
          CHECK(has(row.reason, "oneDNN module was not built"));
          continue;
        }
        CHECK(row.status == "ok");
        CHECK(row.verified == true);
        CHECK(row.gflops > 0.0);
        if (row.impl == "vendor") CHECK(has(row.algo, "onednn"));
      }
    }
}

TEST_CASE("backward rows: unsupported off the cpu backend and for f16; a conv with a bias or a transposed a refused") {
  const RunSettings settings = with_provider(
      {.timing = {.warmup_s = 0.0, .min_samples = 1, .min_time_s = 0.0, .max_time_s = 1.0}}, Provider::Vendor);
  const cases::ConvProblem conv{.n = 1, .c = 2, .h = 5, .w = 5, .k = 3, .r = 3, .s = 3};
  const Problem filter = conv_backward_problem(conv, Gradient::Filter);
  const Row on_ref = run_problem(filter, open_targets({"ref"}).front(), settings);
  CHECK(on_ref.status == "unsupported");
  CHECK(has(on_ref.reason, "beside cpu devices only"));
  cases::ConvProblem half = conv;
  half.dtype = DType::f16;
  const Row f16 = run_problem(conv_backward_problem(half, Gradient::Data), open_targets({"cpu"}).front(), settings);
  CHECK(f16.status == "unsupported");
  CHECK(has(f16.reason, "f32 only"));
  cases::ConvProblem biased = conv;
  biased.bias = true;
  CHECK_THROWS_WITH_AS(conv_backward_problem(biased, Gradient::Data), doctest::Contains("no bias"), Error);
  CHECK_THROWS_WITH_AS(gemm_backward_problem({.m = 2, .n = 3, .k = 4, .trans_a = true}, Gradient::Filter),
                       doctest::Contains("a not transposed"), Error);
}

TEST_CASE("backward suite: each layer's data and filter gradient at batch 8, NHWC, then linear layers'") {
  const Suite suite = make_suite({.name = "backward"}, 1);
  REQUIRE(suite.problems.size() >= 4);
  CHECK(suite.problems[0].op == "conv2d_backward_filter");  // conv1's input is the images: no data gradient
  CHECK(suite.problems[0].workload == "resnet50/conv1/8x3x224x224 k64 7x7 /2 p3 NHWC");
  CHECK(suite.problems[1].op == "conv2d_backward_data");
  CHECK(suite.problems[0].params["n"] == 8);
  CHECK(suite.problems.back().op == "gemm_backward_b");
}

TEST_CASE("suites: every name builds") {
  for (const std::string& name : suite_names()) {
    // They build every weight of their networks: slow here (train: tested below).
    if (name == "conv" || name == "models" || name == "train") continue;
    CHECK(!make_suite({.name = name}, 1).problems.empty());
  }
  const Suite gemm = make_suite({.name = "gemm"}, 1);
  CHECK(gemm.problems.front().workload == "128x128x128");
  CHECK(gemm.problems[1].workload == "129x129x129");
  CHECK_THROWS_WITH_AS(make_suite({.name = "nope"}, 1), doctest::Contains("no suite 'nope'"), Error);
}

TEST_CASE("train: epochs of an mlp on cpu with the step's planned peak; a CNN trains; a model without backward rules "
          "is unsupported") {
  const Target cpu = open_targets({"cpu"}).front();
  const Row row = run_training(train_problem("mlp", 16, 1), cpu, {}, {.images = 70, .epochs = 2});
  REQUIRE(row.status == "ok");
  CHECK(row.params["images"] == 64);
  CHECK(row.params["steps_per_epoch"] == 4);
  REQUIRE(row.params["epoch_s"].size() == 2);
  CHECK(*row.median_s == row.params["epoch_s"][1].get<double>());
  CHECK(row.timer == "host");
  // At least the first layer's weights and their velocity, both on the device.
  CHECK(row.params["planned_peak_bytes"].get<double>() > 2.0 * 3072 * 512 * 4);
  CHECK(std::isfinite(row.params["loss_last"].get<double>()));
  // Softmax cross-entropy to integer labels: about ln(10) for the mlp's small initial logits.
  CHECK(row.params["loss_first"].get<double>() == doctest::Approx(std::log(10.0)).epsilon(0.2));
  const Row cnn = run_training(train_problem("mobilenet-v2", 1, 1), cpu, {}, {.images = 1, .epochs = 1});
  CHECK(cnn.status == "ok");
  CHECK(std::isfinite(cnn.params["loss_last"].get<double>()));
  const Row bert = run_training(train_problem("bert-base", 1, 1), cpu, {}, {.images = 1, .epochs = 1});
  CHECK(bert.status == "ok");  // attention's and gather's rules
  CHECK(std::isfinite(bert.params["loss_last"].get<double>()));
  // A network with an op that has no backward rule yet (rms_norm): an unsupported row saying so.
  Problem no_rule = train_problem("mlp", 16, 1);
  no_rule.graph = Graph{};
  const Tensor x = no_rule.graph.input("input", {16, 8});
  const Tensor normed = no_rule.graph.rms_norm(x, no_rule.graph.constant("scale", {8}, std::vector<float>(8, 1.0f)));
  no_rule.graph.output("logits", no_rule.graph.gemm(normed, no_rule.graph.constant("w", {8, 10}, std::vector<float>(80, 0.1f))));
  const Row unsupported = run_training(no_rule, cpu, {}, {.images = 16, .epochs = 1});
  CHECK(unsupported.status == "unsupported");
  CHECK(unsupported.reason.find("autodiff::gradients") != std::string::npos);
  CHECK_THROWS_WITH_AS(train_problem("nope", 1, 1), doctest::Contains("unknown model 'nope'"), Error);
}

TEST_CASE("train: PyTorch's training step beside a cpu device, or unsupported saying why") {
  const Target cpu = open_targets({"cpu:threads=1"}).front();
  const std::vector<Row> rows =
      train_with_references(train_problem("mlp", 16, 1), cpu, {}, {.images = 32, .epochs = 2});
  REQUIRE(rows.size() == 2);
  const Row& torch = rows[1];
  CHECK(torch.device == torch_device_spec(1));
  CHECK(torch.workload == rows[0].workload);
  if (torch.status != "ok") {
    CHECK(torch.status == "unsupported");
    MESSAGE("skipping PyTorch's numbers: " << torch.reason);
    return;
  }
  CHECK(torch.params["steps_per_epoch"] == 2);
  CHECK(torch.params["epoch_s"].size() == 2);
  CHECK(torch.params["images_per_s"].get<double>() > 0.0);
  // The same loss on the same kind of network: about ln(10) at the start, as porta's.
  CHECK(torch.params["loss_first"].get<double>() == doctest::Approx(std::log(10.0)).epsilon(0.2));
  // None beside a target that is not an open cpu device.
  CHECK(train_with_references(train_problem("mlp", 16, 1), Target{.spec = "x", .backend = "opencl"}, {},
                              {.images = 16, .epochs = 1}).size() == 1);
}

TEST_CASE("train: the largest batch whose planned training step fits, as the compiled step plans it") {
  const Device cpu = Device::open("cpu");
  CHECK(fit_training_batch("mlp", cpu, 1, 1).batch == 0);  // not even batch 1 fits a byte
  const auto plan = [&](std::int64_t batch) {
    return fit_training_batch("mlp", cpu, std::uint64_t{1} << 40, 1, batch).at_batch.peak_bytes();
  };
  const std::uint64_t budget = plan(37) + (plan(38) - plan(37)) / 2;
  const Fit fit = fit_training_batch("mlp", cpu, budget, 1);
  CHECK(fit.batch == 37);
  CHECK(fit.at_batch.peak_bytes() == plan(37));
  const Target target = open_targets({"cpu"}).front();
  const Row row = run_training(train_problem("mlp", 37, 1), target, {}, {.images = 37, .epochs = 1});
  CHECK(row.params["planned_peak_bytes"].get<std::uint64_t>() == fit.at_batch.peak_bytes());
}

TEST_CASE("suites: a workload file's convs at each batch and layout asked for") {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "porta_test_batches.csv";
  std::ofstream(file) << "layer,c,h,w,k,r,s,pad\nb,8,5,5,4,3,3,1\n";
  const Suite suite = make_suite({.workload_file = file.string(), .conv_batches = {1, 8},
                                  .conv_layouts = {Layout::NCHW, Layout::NHWC}}, 1);
  std::vector<std::string> names;
  for (const Problem& p : suite.problems) names.push_back(p.workload);
  CHECK(names == std::vector<std::string>{"b/1x8x5x5 k4 3x3 p1", "b/1x8x5x5 k4 3x3 p1 NHWC", "b/8x8x5x5 k4 3x3 p1",
                                          "b/8x8x5x5 k4 3x3 p1 NHWC"});
  std::filesystem::remove(file);
}

TEST_CASE("conv problems: a bias and an activation in the label, the params and the graph") {
  cases::ConvProblem conv{.n = 2, .c = 8, .h = 5, .w = 5, .k = 8, .r = 3, .s = 3, .bias = true};
  conv.params.groups = 8;
  conv.params.activation = Activation::Silu;
  const Problem p = conv_problem(conv, 1, "");
  CHECK(p.workload == "2x8x5x5 k8 3x3 g8 +bias silu");
  CHECK(p.params["bias"] == true);
  CHECK(p.params["activation"] == "silu");
  std::int64_t constants = 0;
  for (const TensorInfo& t : p.graph.tensors()) constants += t.role == Role::Constant;
  CHECK(constants == 2);
}

TEST_CASE("roofline placement") {
  Ceilings c;
  c.stream_gbs = {{"copy", 10.0}, {"add", 20.0}, {"triad", 99.0}};  // triad is two kernels: not a ceiling
  c.gflops["f32"] = 100.0;
  CHECK(*c.bandwidth_gbs() == 20.0);
  Row r{.dtype = "f32", .flops = 2e9, .bytes = 1e9};  // ai 2: the memory roof is 40 GFLOP/s
  r.gflops = 30.0;
  place_on_roofline(r, c);
  CHECK(*r.ai == doctest::Approx(2.0));
  CHECK(*r.pct_peak == doctest::Approx(30.0));
  CHECK(*r.pct_roofline == doctest::Approx(75.0));
  CHECK(r.bound == "memory");
  Row unknown{.dtype = "bf16", .flops = 2e9, .bytes = 1e9};
  unknown.gflops = 1.0;
  place_on_roofline(unknown, c);
  CHECK(!unknown.pct_peak);
}

TEST_CASE("compute ceilings: the faster of the GEMM and FMA probes; time estimates keep the GEMM's") {
  Ceilings c;
  CHECK(c.compute_ceilings().empty());
  c.fma_gflops = 80.0;
  CHECK(c.compute_ceilings() == std::map<std::string, double>{{"f32", 80.0}});  // the FMA probe alone
  c.gflops = {{"f32", 70.0}, {"f16", 300.0}};  // f16 on matrix units beats the f32 FMA probe
  CHECK(*c.compute_gflops("f32") == 80.0);
  CHECK(*c.compute_gflops("f16") == 300.0);
  CHECK(*c.compute_gflops("bf16") == 80.0);  // computed in f32 where no GEMM probe ran
  CHECK(*c.gemm_gflops("f32") == 70.0);
  CHECK(!c.gemm_gflops("bf16"));
  CHECK(c.compute_ceilings() == std::map<std::string, double>{{"f16", 300.0}, {"f32", 80.0}});
  c.gflops.erase("f32");  // a suite of f16 alone: f32's ceiling is the FMA probe's
  CHECK(c.compute_ceilings() == std::map<std::string, double>{{"f16", 300.0}, {"f32", 80.0}});
  const Ceilings back = ceilings_from_json(to_json(c));
  CHECK(back.fma_gflops == c.fma_gflops);
  CHECK(back.gflops == c.gflops);

  Row fma{.op = "fma", .workload = "f32 multiply-add chains", .device = "cpu", .dtype = "f32"};
  fma.gflops = 90.0;
  CHECK(is_probe(fma));
  CHECK(ceilings_from_rows({fma}, "cpu", "").fma_gflops == 90.0);
  CHECK(!ceilings_from_rows({fma}, "opencl:0", "").fma_gflops);
}

TEST_CASE("FMA probe rows: a rate on the cpu device; unsupported on ref, failed where the device did not open") {
  const std::vector<Target> targets = open_targets({"cpu:threads=1", "ref"});
  const Row cpu = fma_probe_row(targets[0]);
  CHECK(cpu.status == "ok");
  REQUIRE(cpu.gflops);
  CHECK(*cpu.gflops > 0.0);
  const Row ref = fma_probe_row(targets[1]);
  CHECK(ref.status == "unsupported");
  CHECK(ref.reason.find("no FMA probe") != std::string::npos);
  CHECK(!ref.gflops);
  const Row missing = fma_probe_row(Target{.spec = "cpu:x", .backend = "cpu", .error = "no such device"});
  CHECK(missing.status == "failed");
  CHECK(missing.reason == "no such device");
}

TEST_CASE("copy probe: unsupported where the backend has none; where measured, the bandwidth ceiling if faster") {
  const Row cpu = copy_probe_row(open_targets({"cpu:threads=1"})[0]);
  CHECK(cpu.status == "unsupported");
  CHECK(cpu.reason.find("no device-to-device copy probe") != std::string::npos);
  Row copy{.op = "device-copy", .workload = "device-to-device copy", .device = "cuda:0", .dtype = "f32"};
  copy.gbs = 3000.0;
  CHECK(is_probe(copy));
  Ceilings c = ceilings_from_rows({copy}, "cuda:0", "");
  CHECK(c.device_copy_gbs == 3000.0);
  CHECK(*c.bandwidth_gbs() == 3000.0);
  c.stream_gbs["copy"] = 2400.0;  // porta's own kernel, slower than the runtime's copy
  CHECK(*c.bandwidth_gbs() == 3000.0);
  c.stream_gbs["mul"] = 3100.0;
  CHECK(*c.bandwidth_gbs() == 3100.0);
  CHECK(ceilings_from_json(to_json(c)).device_copy_gbs == 3000.0);
}

TEST_CASE("effective rates: convs a provider may run with fewer multiplies, rates above the ceiling") {
  const Json three = conv_problem({.n = 1, .c = 64, .h = 14, .w = 14, .k = 64, .r = 3, .s = 3}, 1).params;
  const Json one = conv_problem({.n = 1, .c = 64, .h = 14, .w = 14, .k = 64, .r = 1, .s = 1}, 1).params;
  Json strided = three, grouped = three, five = three;
  strided["stride_h"] = 2, grouped["groups"] = 64, five["r"] = five["s"] = 5;
  CHECK(has(effective_rate_reason("conv2d", three, "cpu", "native", std::nullopt), "Winograd"));
  CHECK(effective_rate_reason("conv2d", three, "cpu", "vendor", 90.0).empty());  // oneDNN: direct convolution
  CHECK(effective_rate_reason("conv2d", strided, "cpu", "native", std::nullopt).empty());
  CHECK(effective_rate_reason("conv2d", grouped, "cpu", "native", std::nullopt).empty());
  CHECK(effective_rate_reason("conv2d", five, "cpu", "native", std::nullopt).empty());
  CHECK(has(effective_rate_reason("conv2d", five, "cuda", "vendor", std::nullopt), "cuDNN"));
  CHECK(effective_rate_reason("conv2d", one, "cuda", "vendor", std::nullopt).empty());
  CHECK(has(effective_rate_reason("gemm", Json(), "opencl", "native", 104.0), "ceiling"));
  CHECK(!effective_rate_reason("model", Json{{"convs_3x3_stride1", 16}}, "cpu", "native/nhwc", std::nullopt).empty());
  CHECK(effective_rate_reason("model", Json{{"convs_3x3_stride1", 0}}, "cpu", "native", std::nullopt).empty());
  CHECK(effective_rate_reason("model", Json{{"convs_3x3_stride1", 16}}, "pytorch", "eager", std::nullopt).empty());
  Row row{.op = "conv2d", .params = three, .backend = "cpu"};
  row.gflops = 250.0;
  CHECK(rate_cell(row) == "250.0 eff");
  row.impl = "vendor";
  CHECK(rate_cell(row) == "250.0");
}

TEST_CASE("report: portability is the harmonic mean of efficiencies, 0 where a platform has no result") {
  const auto doc = [](const std::string& host, double native, std::optional<double> vendor) {
    Json env{{"hostname", host},
             {"devices", Json::array({Json{{"spec", "cpu"}, {"name", "CPU " + host},
                                          {"ceilings", Json{{"gflops", Json{{"f32", 100.0}}}, {"stream_gbs", Json{{"copy", 10.0}}}}}}})}};
    std::vector<Row> rows;
    Row r{.op = "gemm", .workload = "64x64x64", .device = "cpu", .backend = "cpu", .impl = "native", .dtype = "f32"};
    r.gflops = native;
    r.pct_peak = native;  // of a 100 GFLOP/s ceiling
    rows.push_back(r);
    r.impl = "vendor";
    r.gflops = vendor;
    r.pct_peak = vendor;
    if (!vendor) r.status = "unsupported";
    rows.push_back(r);
    return results_document(env, rows);
  };
  const std::string html = render_report({{"a.json", doc("a", 50.0, 100.0)}, {"b.json", doc("b", 25.0, std::nullopt)}});
  CHECK(has(html, "cpu @ a"));
  CHECK(has(html, "cpu @ b"));
  CHECK(has(html, "data-gflops=\"50.0\""));
  // native: architectural 0.5 and 0.25 -> 2 / (2 + 4) = 0.33; application 0.5 (of vendor's 100) and 1 -> 0.67
  CHECK(has(html, "<td class=num>0.33</td><td class=num>0.67</td>"));
  CHECK(has(html, "title=\"no result on cpu @ b\">0</td>"));  // vendor is unsupported on b
  CHECK(has(html, "<td class=num>2.00</td>"));                  // vendor over native on a
  CHECK(!has(html, "http"));                                      // no network requests, no links out
}

TEST_CASE("report: the train chart, porta's cpu row labelled with PyTorch's epoch time over its own") {
  const auto train_row = [](const std::string& device, const std::string& backend, double epoch_s) {
    Row r{.op = "train", .workload = "mlp b32", .device = device, .backend = backend, .dtype = "f32"};
    r.median_s = epoch_s;
    r.params["images_per_s"] = 64.0 / epoch_s;
    return r;
  };
  const Json doc = results_document(Json{{"hostname", "a"}}, {train_row("cpu", "cpu", 0.5),
                                                             train_row(torch_device_spec(2), "pytorch", 0.75),
                                                             train_row("opencl:0", "opencl", 1.0)});
  const std::string html = render_report({{"a.json", doc}});
  CHECK(has(html, "<h2>Training</h2>"));
  CHECK(has(html, "data-images-per-s=\"128.0\""));
  CHECK(has(html, "128.0, 1.50x PyTorch"));
  CHECK(has(html, "64.0</text>"));  // opencl: no PyTorch beside it
}

TEST_CASE("scaling model: a ring allreduce's time, and efficiency with and without overlap") {
  // 100 MB over 4 ranks at 10 GB/s: 2 x 3/4 x 100e6 / 10e9 = 15 ms.
  const ScalingPrediction hidden = predict_scaling(0.3, 100e6, {"test", 10.0, 4});
  CHECK(hidden.allreduce_s == doctest::Approx(0.015));
  CHECK(hidden.efficiency == doctest::Approx(0.3 / 0.315));
  CHECK(hidden.efficiency_overlapped == doctest::Approx(1.0));  // 15 ms < the 200 ms backward pass
  // A step of 30 ms: the backward pass (20 ms) hides 20 of the 150 ms allreduce at 1 GB/s.
  const ScalingPrediction exposed = predict_scaling(0.03, 100e6, {"test", 1.0, 4});
  CHECK(exposed.efficiency == doctest::Approx(0.03 / 0.18));
  CHECK(exposed.efficiency_overlapped == doctest::Approx(0.03 / 0.16));
  CHECK(predict_scaling(0.1, 100e6, {"one", 1.0, 1}).efficiency == 1.0);
  // A published system (docs/cluster.md): ResNet-50 on 32 servers of 8 P100, 50 Gb/s Ethernet between
  // them, 0.232 s per step; the paper reports about 0.90 of linear from 8 to 256 GPUs.
  const ScalingPrediction published = predict_scaling(0.232, 25.6e6 * 4, {"50 Gb/s", 6.25, 32});
  CHECK(published.efficiency == doctest::Approx(0.88).epsilon(0.01));
  CHECK(published.efficiency_overlapped == 1.0);
  const std::vector<Link> links = assumed_links();
  CHECK(links.size() == 7);
  CHECK(links.back().ranks == 128);
}

TEST_CASE("report: the scaling model on each train row, with the allreduce that comm rows measured") {
  Row train{.op = "train", .workload = "resnet50 b8", .device = "cpu", .backend = "cpu", .dtype = "f32"};
  train.median_s = 2.0;
  train.params = Json{{"steps_per_epoch", 4}, {"gradient_bytes", 102.4e6}};
  Row comm{.op = "allreduce", .workload = "allreduce 256 MiB", .device = "cpu", .backend = "mpi", .dtype = "f32"};
  comm.bytes = 256 << 20;
  comm.params = Json{{"ranks", 2}};
  comm.busbw_gbs = 0.35;
  const std::string html = render_report({{"a.json", results_document(Json{{"hostname", "a"}}, {train, comm})}});
  CHECK(has(html, "<h2>Data-parallel scaling on paper</h2>"));
  CHECK(has(html, "resnet50 b8 on cpu: a step of 500.0 ms, 102.4 MB of gradients"));
  CHECK(has(html, "measured: mpi allreduce of 256 MiB</td><td class=\"num\">2</td><td class=\"num\">0.3</td>"));
  CHECK_FALSE(has(render_report({{"b.json", results_document(Json{{"hostname", "b"}}, {comm})}}), "on paper"));
}

TEST_CASE("standings: the page from the fixtures, byte for byte, whatever the order of the files") {
  const std::filesystem::path dir = PORTA_BENCH_TESTDATA;  // see testdata/README.md
  std::vector<ResultsInput> inputs;
  for (const char* name : {"synthetic-gpu.json", "opencl.json", "models.json", "cpu-gemm.json", "cpu-conv.json"})
    inputs.push_back({(dir / name).string(), load_results(dir / name)});
  std::ifstream file(dir / "standings.md", std::ios::binary);
  const std::string expected{std::istreambuf_iterator<char>(file), {}};
  CHECK(first_difference(render_standings(inputs, 3), expected) == "");
  std::reverse(inputs.begin(), inputs.end());
  CHECK(first_difference(render_standings(inputs, 3), expected) == "");
}

TEST_CASE("standings: an area without rows is left out; PyTorch stands beside the cpu device of as many threads") {
  const auto doc = [](const std::vector<Row>& rows) {
    return results_document(Json{{"devices", Json::array({Json{{"spec", "cpu"}, {"backend", "cpu"}, {"threads", 4}}})}},
                            rows);
  };
  Row porta{.op = "model", .workload = "resnet50 b1", .device = "cpu", .backend = "cpu", .dtype = "f32"};
  porta.median_s = 0.1;
  porta.verified = true;
  Row torch = porta;
  torch.device = torch_device_spec(4), torch.backend = "pytorch", torch.impl = "eager", torch.median_s = 0.2;
  Row other_threads = torch;
  other_threads.device = torch_device_spec(2);
  const std::string page = render_standings({{"a/m.json", doc({porta, torch, other_threads})}});
  CHECK(has(page, "## Whole networks"));
  CHECK(!has(page, "## GEMM"));
  CHECK(!has(page, "## OpenCL"));
  CHECK(has(page, "| resnet50 b1 | f32 | 100.00 | 200.00 | 2.00 |"));
  CHECK(has(page, "porta ÷ PyTorch: 1 of 1 rows >= 0.90, geometric mean 2.00."));
  CHECK(has(page, "`m.json`"));  // by file name: the page does not depend on where the files are
}

TEST_SUITE("cli") {
  // The command line as the bench_cli fuzz target checks it: parsed and checked, nothing run.
  int check(std::vector<std::string> args) {
    args.insert(args.begin(), "porta-bench");
    return run_cli(args, CliMode::CheckOnly);
  }

  TEST_CASE("check-only: valid command lines pass without running anything") {
    CHECK(check({"gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--dtype", "bf16"}) == 0);
    CHECK(check({"conv", "--n", "64", "--c", "512", "--h", "56", "--w", "56", "--k", "512", "--r", "3", "--s", "3",
                 "--pad", "1"}) == 0);
    CHECK(check({"conv", "--n", "8", "--c", "96", "--h", "56", "--w", "56", "--k", "96", "--r", "3", "--s", "3",
                 "--groups", "96", "--bias", "--activation", "silu"}) == 0);
    CHECK(check({"run", "--suite", "models", "--dtype", "f16,bf16"}) == 0);
    CHECK(check({"model", "--name", "resnet50", "--batch", "1,64"}) == 0);
    CHECK(check({"devices"}) == 0);
    CHECK(check({"train", "--model", "mlp,resnet50", "--batch", "8,32", "--images", "2048", "--epochs", "2"}) == 0);
    CHECK(check({"report", "--markdown", "standings.md", "--listed-rows", "10", "a.json", "b.json"}) == 0);
  }

  TEST_CASE("check-only: bad command lines are ArgumentError naming the value") {
    CHECK_THROWS_WITH_AS(check({"gemn"}), doctest::Contains("unknown command 'gemn'"), ArgumentError);
    CHECK_THROWS_WITH_AS(check({"gemm", "--m", "0", "--n", "1", "--k", "1"}), doctest::Contains("0 must be > 0"),
                         ArgumentError);
    CHECK_THROWS_WITH_AS(check({"gemm", "--m", "1", "--n", "1", "--k", "1", "--dtype", "f64"}),
                         doctest::Contains("f64"), ArgumentError);
    CHECK_THROWS_WITH_AS(check({"run", "--suite", "nope"}), doctest::Contains("nope"), ArgumentError);
    CHECK_THROWS_WITH_AS(check({"train", "--model", "vgg"}), doctest::Contains("vgg"), ArgumentError);
    CHECK_THROWS_WITH_AS(check({"conv", "--n", "1", "--c", "1", "--h", "1", "--w", "1", "--k", "1", "--r", "1", "--s",
                                "1", "--activation", "swish"}),
                         doctest::Contains("swish"), ArgumentError);
    // 2^32 x 2^20 x 2^20 x 2^20 weights: refused by the graph builder, never allocated.
    CHECK_THROWS_WITH_AS(check({"conv", "--n", "1", "--c", "1048576", "--h", "1", "--w", "1", "--k", "4294967296",
                                "--r", "1048576", "--s", "1048576"}),
                         doctest::Contains("4294967296"), ArgumentError);
  }
}

TEST_CASE("job: :local specs take the node-local rank's device; bus bandwidth factors are nccl-tests'") {
  CHECK(local_device_spec("cuda:local", 3) == "cuda:3");
  CHECK(local_device_spec("opencl:local", 0) == "opencl:0");
  CHECK(local_device_spec("cpu:local", 2) == "cpu");
  CHECK(local_device_spec("cpu:threads=2", 1) == "cpu:threads=2");
  CHECK(bus_factor("allreduce", 4) == doctest::Approx(1.5));
  CHECK(bus_factor("allgather", 4) == doctest::Approx(0.75));
  CHECK(bus_factor("reduce-scatter", 3) == doctest::Approx(2.0 / 3.0));
  CHECK(bus_factor("broadcast", 8) == 1.0);
  CHECK(size_text(8) == "8 B");
  CHECK(size_text(3 << 20) == "3 MiB");
}

TEST_CASE("job: a job of one writes the rows as before; a gathered file splits into one input per rank") {
  Cluster& one = cluster();
  REQUIRE(one.size() == 1);
  const Row row{.op = "gemm", .workload = "8x8x8", .device = "cpu", .backend = "cpu", .dtype = "f32"};
  const Json doc = *gather_document(one, Json{{"hostname", "a"}}, {row});
  CHECK(doc["results"][0] == to_json(row));
  CHECK_FALSE(doc["results"][0].contains("rank"));

  Json job = results_document(Json{{"hostname", "a"}, {"suite", "quick"}}, {});
  job["env"]["ranks"] = Json::array({Json{{"rank", 0}, {"hostname", "a"}}, Json{{"rank", 1}, {"hostname", "b"}}});
  for (int rank : {1, 0, 1}) {
    Row r = row;
    r.rank = rank, r.host = rank ? "b" : "a";
    job["results"].push_back(to_json(r));
  }
  const std::vector<ResultsInput> split = split_ranks({{"results.json", job}});
  REQUIRE(split.size() == 2);
  CHECK(split[0].name == "results.json rank 0");
  CHECK(split[1].doc["env"]["hostname"] == "b");
  CHECK(split[1].doc["env"]["suite"] == "quick");
  CHECK(split[0].doc["results"].size() == 1);
  CHECK(split[1].doc["results"].size() == 2);
  const Merged m = merge(split);
  REQUIRE(m.platforms.size() == 2);
  CHECK(m.platforms[0].label == "cpu @ a");
  CHECK(m.platforms[1].label == "cpu @ b");
}
