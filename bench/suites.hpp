#pragma once
// Named sets of problems: `porta-bench run --suite NAME`.
#include <string>
#include <string_view>
#include <vector>

#include "problems.hpp"

namespace porta::bench {

std::vector<std::string> suite_names();  // every suite that exists, for help text and errors

// Throws porta::Error(InvalidArgument) for a suite that does not exist (yet).
std::vector<Problem> suite_problems(std::string_view name, std::uint64_t seed);

}  // namespace porta::bench
