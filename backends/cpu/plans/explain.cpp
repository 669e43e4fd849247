#include "backends/cpu/plans/explain.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "porta/error.hpp"

namespace porta::detail {
namespace {

bool read_verbose() {
  const char* value = std::getenv("PORTA_VERBOSE");
  const std::string_view setting = value ? value : "0";
  if (setting != "0" && setting != "1")
    throw Error(ErrorCode::InvalidArgument, "PORTA_VERBOSE=" + std::string(setting) + ": expected 0 or 1");
  return setting == "1";
}

}  // namespace

bool plans_verbose() {
  static const bool verbose = read_verbose();
  return verbose;
}

void print_plan(std::string_view problem, std::string_view plan) {
  static std::mutex mutex;  // kernels may plan on several threads at once: whole lines
  const std::string line = "porta_verbose,cpu," + std::string(problem) + "," + std::string(plan) + "\n";
  const std::lock_guard lock(mutex);
  std::fputs(line.c_str(), stderr);
}

}  // namespace porta::detail
