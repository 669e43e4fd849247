#include "job.hpp"

#include <fmt/core.h>

#include "results_file.hpp"

namespace porta::bench {

std::optional<Json> gather_document(Cluster& job, Json env, std::vector<Row> rows) {
  if (job.transport() == "none") return results_document(env, rows);
  const std::string host = text_of(env, "hostname");
  env["rank"] = job.rank();
  env["local_rank"] = job.local_rank();
  for (Row& row : rows) row.rank = job.rank(), row.host = host;
  const std::vector<std::string> parts = job.gather(results_document(env, rows).dump());
  if (job.rank() != 0) return std::nullopt;
  Json doc = results_document(env, {});
  Json& all = doc["env"];
  all["job"] = Json{{"ranks", job.size()}, {"transport", job.transport()}};
  all["ranks"] = Json::array();
  for (const std::string& part : parts) {
    Json rank_doc = Json::parse(part);
    all["ranks"].push_back(rank_doc["env"]);
    for (Json& row : rank_doc["results"]) doc["results"].push_back(std::move(row));
  }
  return doc;
}

std::vector<ResultsInput> split_ranks(const std::vector<ResultsInput>& inputs) {
  std::vector<ResultsInput> out;
  for (const ResultsInput& in : inputs) {
    const Json& env = in.doc["env"];
    if (!env.contains("ranks") || !env["ranks"].is_array() || env["ranks"].size() < 2) {
      out.push_back(in);
      continue;
    }
    for (const Json& rank_env : env["ranks"]) {
      const int rank = static_cast<int>(number_of(rank_env, "rank").value_or(0));
      Json doc{{"schema", schema_name}, {"env", rank_env}, {"results", Json::array()}};
      doc["env"]["suite"] = env.value("suite", "");
      for (const Json& row : in.doc["results"])
        if (static_cast<int>(number_of(row, "rank").value_or(0)) == rank) doc["results"].push_back(row);
      out.push_back({fmt::format("{} rank {}", in.name, rank), std::move(doc)});
    }
  }
  return out;
}

}  // namespace porta::bench
