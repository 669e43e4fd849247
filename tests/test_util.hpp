#pragma once
// Helpers shared by the test files.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cpu/kernels/micro_kernel.hpp"
#include "porta/porta.hpp"

namespace porta::test {

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// Sets an environment variable for a scope, then restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// PORTA_TEST_CASES: a case is selected when its name contains the filter, or, for a filter that
// starts with '^', starts with the rest ("^mul/" selects mul's cases and not matmul's); filters
// separated by '|' select what any of them does ("^matmul/|^gemm/").
inline bool case_selected(std::string_view name, std::string_view filter) {
  const std::size_t bar = filter.find('|');
  if (bar != std::string_view::npos)
    return case_selected(name, filter.substr(0, bar)) || case_selected(name, filter.substr(bar + 1));
  return filter.starts_with('^') ? name.starts_with(filter.substr(1)) : contains(name, filter);
}

inline std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// PORTA_REQUIRE_DEVICES=1, for machines where the devices under test must be there (a GPU machine's
// checks): a device that is missing, or that runs none of the cases, fails the test instead of skipping.
inline bool devices_required() {
  const char* set = std::getenv("PORTA_REQUIRE_DEVICES");
  const std::string value = set == nullptr ? "" : set;
  if (!value.empty() && value != "0" && value != "1")
    throw Error(ErrorCode::InvalidArgument, "PORTA_REQUIRE_DEVICES='" + value + "': use 0 or 1");
  return value == "1";
}

// Why a device cannot be tested here: a skip with that message, or under PORTA_REQUIRE_DEVICES=1 a failure.
inline void skip_device(const std::string& why) {
  if (devices_required()) FAIL_CHECK(why << " (PORTA_REQUIRE_DEVICES=1)");
  else MESSAGE("skipping: " << why);
}

// Why this run tested nothing, set by a test that found so. After a run without failures main() prints
// it on a line "SKIPPED: <why>", which CTest reports as Skipped rather than Passed (tests/CMakeLists.txt).
inline std::string& skip_reason() {
  static std::string why;
  return why;
}

// A test with no device to run on here: skip_device, and the run is a skip for that reason.
inline void skip_test(const std::string& why) {
  skip_device(why);
  skip_reason() = why;
}

// The devices a test runs on: PORTA_TEST_DEVICES, specs separated by ',' or ';', else every device of
// this build (ref excluded). Specs may carry comma-separated options ("cpu:threads=2,x=y"), so a piece
// with '=' but no ':' is an option of the spec before it, not a device of its own.
inline std::vector<std::string> devices_under_test() {
  const std::string text = env("PORTA_TEST_DEVICES");
  std::vector<std::string> specs;
  if (text.empty()) {
    for (const DeviceInfo& d : devices()) specs.push_back(d.spec);
    return specs;
  }
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find_first_of(",;", pos), text.size());
    const std::string piece = text.substr(pos, end - pos);
    const bool option = !specs.empty() && text[pos - 1] == ',' && piece.find('=') != std::string::npos &&
                        piece.find(':') == std::string::npos;
    if (option) specs.back() += "," + piece;
    else if (!piece.empty()) specs.push_back(piece);
    pos = end + 1;
  }
  return specs;
}

// PORTA_CPU_ISA caps the cpu device's kernels. Naming a set that this build or CPU does not run
// would test a narrower set again under its name: ctest reports such a run as skipped.
inline std::string cpu_isa_absent(const std::string& spec) {
  const std::string isa = env("PORTA_CPU_ISA");
  if (spec.rfind("cpu", 0) != 0 || (isa != "avx512" && isa != "avx2") || detail::isa_runs(isa)) return {};
  return "PORTA_CPU_ISA=" + isa + " names kernels that this build or CPU does not run";
}

// A device that is absent is skipped (skip_device: under PORTA_REQUIRE_DEVICES=1 a failure), and a cpu capped
// at kernels it does not run always is; a malformed spec fails. Why a device is skipped goes to `untested`.
inline std::optional<Device> open_or_skip(const std::string& spec, std::vector<std::string>& untested) {
  if (const std::string absent = cpu_isa_absent(spec); !absent.empty()) {
    untested.push_back("device '" + spec + "': " + absent);
    MESSAGE("skipping: " << untested.back());
    return std::nullopt;
  }
  try {
    return Device::open(spec);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::NotFound && e.code() != ErrorCode::DeviceUnavailable) throw;
    untested.push_back(e.what());
    skip_device(untested.back());
    return std::nullopt;
  }
}

// PORTA_TEST_IMPL=vendor tests the devices' vendor library providers instead of porta's kernels;
// PORTA_TEST_TF32=1 compiles with allow_tf32, and judges f32 products by tf32's precision.
inline CompileOptions options_under_test() {
  CompileOptions options;
  const std::string impl = env("PORTA_TEST_IMPL"), tf32 = env("PORTA_TEST_TF32");
  if (impl == "vendor") options.impl = Impl::Vendor;
  else if (!impl.empty() && impl != "native")
    throw Error(ErrorCode::InvalidArgument, "PORTA_TEST_IMPL='" + impl + "': use native or vendor");
  if (tf32 == "1") options.allow_tf32 = true;
  else if (!tf32.empty() && tf32 != "0")
    throw Error(ErrorCode::InvalidArgument, "PORTA_TEST_TF32='" + tf32 + "': use 0 or 1");
  return options;
}

// open_or_skip for a test that keeps no list of what it could not test.
inline std::optional<Device> open_or_skip(const std::string& spec) {
  std::vector<std::string> untested;
  return open_or_skip(spec, untested);
}

// ref, then each other device under test that opens (open_or_skip).
inline std::vector<Device> ref_and_devices_under_test() {
  std::vector<Device> result{Device::open("ref")};
  for (const std::string& spec : devices_under_test())
    if (spec != "ref")
      if (std::optional<Device> device = open_or_skip(spec)) result.push_back(std::move(*device));
  return result;
}

// Runs `f`, which must throw porta::Error with `code`; returns its message ("" when it did not throw).
template <class F>
std::string error_of(F&& f, ErrorCode code) {
  try {
    f();
  } catch (const Error& e) {
    CHECK_MESSAGE(e.code() == code, "expected '" << std::string(to_string(code)) << "', got '"
                                                 << std::string(to_string(e.code())) << "': " << std::string(e.what()));
    return e.what();
  }
  FAIL_CHECK("no porta::Error thrown, expected '" << std::string(to_string(code)) << "'");
  return {};
}

// Checks that `f` throws `code` and that the message names every one of `parts`.
template <class F>
void check_error(F&& f, ErrorCode code, std::initializer_list<std::string_view> parts) {
  const std::string what = error_of(std::forward<F>(f), code);
  for (const std::string_view part : parts)
    CHECK_MESSAGE(contains(what, part), "'" << what << "' should name '" << std::string(part) << "'");
}

// Runs `exe` (never run before) three times, which on a GPU covers an eager, a captured and a
// replayed run. Each run's own time must be on `clock`, positive, and at most the host's wall time
// around run(): the tolerance allows for two clocks that tick a little apart.
inline void check_run_times(Executable& exe, RunClock clock) {
  CHECK(exe.last_run_time().clock == RunClock::None);
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    exe.run();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const RunTime t = exe.last_run_time();
    CHECK(to_string(t.clock) == to_string(clock));
    CHECK(t.seconds > 0.0);
    CHECK_MESSAGE(t.seconds <= wall * 1.02 + 10e-6, "run time " << t.seconds << " s, host wall " << wall << " s");
  }
}

}  // namespace porta::test
