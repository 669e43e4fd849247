#pragma once
// Per-node times, porta's (a profiled Executable) or ONNX Runtime's (its own profiler), summed by
// kind of node so that two runtimes that fuse differently can be set side by side.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "porta/porta.hpp"

namespace porta::ort {

struct NodeTime {
  std::string name, op;  // op: porta's op name or ORT's op type
  double seconds = 0.0;  // per run
};

// The last run of an Executable compiled with CompileOptions::profile.
std::vector<NodeTime> node_times(const Executable& exe);

struct KindTime {
  std::string kind;
  int count = 0;
  double seconds = 0.0;
};

// Summed by kind, largest first. A conv node named as one of `model`'s convs, or as the batchnorm,
// activation or residual add fused into it, is a "conv2d depthwise", "conv2d 1x1" or "conv2d RxS";
// any other node goes by its op in lower case (ORT's pools in porta's spelling).
std::vector<KindTime> by_kind(const Graph& model, const std::vector<NodeTime>& times);

// One line per node of a profiled Executable's last run, in execution order: its name, op, ms, share
// of the run, and what the backend chose for it (Executable::node_plans).
void print_nodes(std::FILE* out, const Executable& exe);

// One table, a row per kind and, per source (e.g. "porta", "ORT"), its node count, ms and share.
void print_by_kind(std::FILE* out, const Graph& model,
                   const std::vector<std::pair<std::string, std::vector<NodeTime>>>& sources);

}  // namespace porta::ort
