// porta-bench: the command line (cli.cpp), with one clear line and a non-zero exit for anything
// that goes wrong; never a crash. In a job of several processes, an error on one rank ends them all
// with that line and its exit code, rather than leave the others waiting for it.
#include <exception>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli.hpp"
#include "cluster.hpp"
#include "env.hpp"
#include "results.hpp"

namespace {

int fail(int code, const std::string& what) {
  using namespace porta::bench;
  if (Cluster* job = open_job())
    job->abort(code, fmt::format("porta-bench: rank {} ({}): error: {}", job->rank(), hostname(), what));
  fmt::print(stderr, "porta-bench: error: {}\n", what);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace porta::bench;
  try {
    return run_cli(std::vector<std::string>(argv, argv + argc));
  } catch (const ArgumentError& e) {
    return fail(2, single_line(e.what()));
  } catch (const std::exception& e) {
    return fail(1, single_line(e.what()));
  } catch (...) {
    return fail(1, "unknown exception");
  }
}
