#pragma once
// What kernels decide, made visible. A kernel that makes a plan (backends/cpu/plans/; OpenCL's
// at prepare, through LaunchBuilder::note_plan) reports it with note_plan, in two ways:
// - PORTA_VERBOSE=1 prints it on stderr, one line per call, as
//   "porta_verbose,<backend>,<problem>,<plan>" (the problem's shape, then the plan in one line), in
//   the manner of oneDNN's verbose mode. Read once; a value other than 0 or 1 throws InvalidArgument.
// - An executable's first run records it for the node being run (Executable::node_plans): a
//   PlanScope routes this thread's notes into the node's record.
#include <string>
#include <string_view>

namespace porta::detail {

bool plans_verbose();

// Whether a plan made now is wanted: verbose, or a PlanScope open on this thread. Describing a plan
// costs more than a small kernel's run, so kernels ask first.
bool plans_wanted();

// Prints the plan where verbose, and adds it to the open PlanScope's record, once per distinct plan.
void note_plan(std::string_view backend, std::string_view problem, std::string_view plan);

// While alive, note_plan on this thread adds to `record` ("; " between distinct plans). A kernel
// that plans on worker threads plans on this one too (a parallel loop's caller runs its first part),
// and a node's calls make one plan per shape.
class PlanScope {
 public:
  explicit PlanScope(std::string* record);
  ~PlanScope();
  PlanScope(const PlanScope&) = delete;
  PlanScope& operator=(const PlanScope&) = delete;

 private:
  std::string* previous_;
};

}  // namespace porta::detail
