#pragma once
// One results file for a job of several processes: every rank's rows and environment, gathered at
// rank 0 (bench/cluster.hpp), and split apart again by rank where the report reads it back.
#include <optional>
#include <vector>

#include "cluster.hpp"
#include "merged_results.hpp"
#include "results.hpp"

namespace porta::bench {

// At rank 0, the porta-bench/1 document of every rank's `rows`, each marked with its rank and host,
// under rank 0's `env` with "job" (the ranks and the transport) and "ranks" (each rank's own env);
// nullopt on the other ranks. A job of one gives results_document(env, rows), as before.
std::optional<Json> gather_document(Cluster& job, Json env, std::vector<Row> rows);

// Each input that holds several ranks, as one input per rank ("NAME rank R") with that rank's env
// and rows (rows no rank owns stay with rank 0): the report then shows the ranks' machines side by
// side as it does for files from several machines.
std::vector<ResultsInput> split_ranks(const std::vector<ResultsInput>& inputs);

}  // namespace porta::bench
