#pragma once
// Reading result files back: `report`, `compare` and `run --peaks`.
#include <filesystem>
#include <map>
#include <string>

#include "peak.hpp"
#include "results.hpp"

namespace porta::bench {

// A porta-bench/1 document, checked enough that readers can index it: an "env" object and a
// "results" array of objects. Anything else is porta::Error(InvalidArgument) naming the file.
Json load_results(const std::filesystem::path& path);

// The measured ceilings recorded for each device spec in a document's env.
std::map<std::string, Ceilings> recorded_ceilings(const Json& doc);

// Typed access that tolerates null and missing fields.
std::string text_of(const Json& j, const char* key);
std::optional<double> number_of(const Json& j, const char* key);
std::optional<bool> flag_of(const Json& j, const char* key);

}  // namespace porta::bench
