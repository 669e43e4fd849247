#pragma once
// Helpers shared by the test files.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "porta/porta.hpp"

namespace porta::test {

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

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

}  // namespace porta::test
