#pragma once
// Helpers shared by the test files.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>

#include "porta/porta.hpp"

namespace porta::test {

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// PORTA_TEST_CASES: a case is selected when its name contains the filter, or, for a filter that
// starts with '^', starts with the rest ("^mul/" selects mul's cases and not matmul's).
inline bool case_selected(std::string_view name, std::string_view filter) {
  return filter.starts_with('^') ? name.starts_with(filter.substr(1)) : contains(name, filter);
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
