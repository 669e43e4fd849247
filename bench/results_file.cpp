#include "results_file.hpp"

#include <fstream>

#include <fmt/core.h>

namespace porta::bench {

Json load_results(const std::filesystem::path& path) {
  std::ifstream file(path);
  if (!file) throw Error(ErrorCode::IoError, fmt::format("cannot read results file '{}'", path.string()));
  Json doc = Json::parse(file, nullptr, false);
  const auto fail = [&](const std::string& why) {
    throw Error(ErrorCode::InvalidArgument, fmt::format("'{}' is not a porta-bench result file: {}", path.string(), why));
  };
  if (doc.is_discarded()) fail("not valid JSON");
  if (!doc.is_object()) fail("not a JSON object");
  if (text_of(doc, "schema") != schema_name) fail(fmt::format("schema is not \"{}\"", schema_name));
  if (!doc.contains("env") || !doc["env"].is_object()) fail("no \"env\" object");
  if (!doc.contains("results") || !doc["results"].is_array()) fail("no \"results\" array");
  for (const Json& row : doc["results"])
    if (!row.is_object()) fail("a result is not an object");
  return doc;
}

std::map<std::string, Ceilings> recorded_ceilings(const Json& doc) {
  std::map<std::string, Ceilings> out;
  const Json& env = doc.at("env");
  if (!env.contains("devices") || !env["devices"].is_array()) return out;
  for (const Json& d : env["devices"])
    if (d.is_object() && d.contains("ceilings")) out[text_of(d, "spec")] = ceilings_from_json(d["ceilings"]);
  return out;
}

std::string text_of(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

std::optional<double> number_of(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

std::optional<bool> flag_of(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_boolean()) return std::nullopt;
  return j[key].get<bool>();
}

}  // namespace porta::bench
