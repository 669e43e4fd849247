#pragma once
// PORTA_VERBOSE=1: each CPU kernel that makes a plan prints it on stderr, one line per call, as
// "porta_verbose,cpu,<problem>,<plan>" (the problem's shape, then describe(plan)), in the manner
// of oneDNN's verbose mode. Read once; a value other than 0 or 1 throws InvalidArgument.
#include <string>
#include <string_view>

namespace porta::detail {

bool plans_verbose();
void print_plan(std::string_view problem, std::string_view plan);

}  // namespace porta::detail
