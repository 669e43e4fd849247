// doctest's main: a test binary of its own, so that CTest can run suites and pass options.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
