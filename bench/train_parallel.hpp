#pragma once
// porta-bench train --data-parallel: under mpirun, each rank trains on its shard of the global batch;
// the gradients are averaged over the ranks (Cluster's allreduce, f32, in buckets) and every rank
// applies the same update (SGD or AdamW), so the variables stay identical, which is checked at the end.
// docs/training.md#data-parallel-training says how the step is split.
#include <string>

#include <CLI/CLI.hpp>

namespace porta::bench {

struct DataParallelSettings {
  bool enabled = false;
  double bucket_mib = 25.0;       // gradients per allreduce, at most (one larger tensor goes alone)
  double rank_timeout_s = 3600.0; // how long a rank waits for the others (rank 0's 1-rank baseline included)
  bool no_overlap = false;        // start the allreduces after the backward pass (to measure the overlap)
  std::string optimizer = "sgd";  // the update: sgd or adamw (bench/train.hpp's hyper-parameters)
  // strong: --batch is the global batch, split across the ranks; weak: each rank's, the global
  // batch growing with the ranks (as data-parallel scaling is usually quoted).
  std::string scaling = "strong";
};

struct TrainArgs;
void add_data_parallel_options(CLI::App& train_command, DataParallelSettings& settings);

// Per model, batch and device: rank 0 alone runs the single-process step (the baseline, one row)
// at the global batch (strong scaling) or at one rank's (weak), then every rank the data-parallel
// one (one row, at rank 0, with the scaling efficiency against the baseline: its images/s over the
// ranks times the baseline's). Rank 0 writes --json and --csv. A strong-scaling batch that does not
// divide by the ranks is an ArgumentError; a rank whose variables differ from rank 0's an Error.
int run_data_parallel(const TrainArgs& args, const std::string& command_line);

}  // namespace porta::bench
