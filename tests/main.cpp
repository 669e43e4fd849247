// doctest's main: a test binary of its own, so that CTest can run suites and pass options. A run
// without failures in which a test had nothing to test says so last (test_util.hpp, skip_reason).
#define DOCTEST_CONFIG_IMPLEMENT
#include <iostream>

#include "test_util.hpp"

int main(int argc, char** argv) {
  const int result = doctest::Context(argc, argv).run();
  if (result == 0 && !porta::test::skip_reason().empty())
    std::cout << "SKIPPED: " << porta::test::skip_reason() << '\n';
  return result;
}
