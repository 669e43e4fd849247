#include "core/runtime/plan_log.hpp"

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

thread_local std::string* open_record = nullptr;

void add_once(std::string& record, std::string_view plan) {
  std::string_view rest = record;
  while (!rest.empty()) {  // plans hold no ';', so the record splits back into them
    const std::size_t end = rest.find("; ");
    if (rest.substr(0, end) == plan) return;
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 2);
  }
  if (!record.empty()) record += "; ";
  record += plan;
}

}  // namespace

bool plans_verbose() {
  static const bool verbose = read_verbose();
  return verbose;
}

bool plans_wanted() { return open_record != nullptr || plans_verbose(); }

void note_plan(std::string_view backend, std::string_view problem, std::string_view plan) {
  if (open_record) add_once(*open_record, plan);
  if (!plans_verbose()) return;
  static std::mutex mutex;  // kernels may plan on several threads at once: whole lines
  const std::string line =
      "porta_verbose," + std::string(backend) + "," + std::string(problem) + "," + std::string(plan) + "\n";
  const std::lock_guard lock(mutex);
  std::fputs(line.c_str(), stderr);
}

PlanScope::PlanScope(std::string* record) : previous_(open_record) { open_record = record; }
PlanScope::~PlanScope() { open_record = previous_; }

}  // namespace porta::detail
