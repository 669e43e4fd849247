// porta-bench: the command line (cli.cpp), with one clear line and a non-zero exit for anything
// that goes wrong; never a crash.
#include <exception>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli.hpp"
#include "results.hpp"

int main(int argc, char** argv) {
  using namespace porta::bench;
  try {
    return run_cli(std::vector<std::string>(argv, argv + argc));
  } catch (const ArgumentError& e) {
    fmt::print(stderr, "porta-bench: error: {}\n", single_line(e.what()));
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "porta-bench: error: {}\n", single_line(e.what()));
    return 1;
  } catch (...) {
    fmt::print(stderr, "porta-bench: error: unknown exception\n");
    return 1;
  }
}
